//! Schema helpers for fields whose Rust type says less than the CRD must.

use schemars::{json_schema, Schema, SchemaGenerator};

/// A whole Kubernetes object kept as it is: `type: object` with
/// `x-kubernetes-preserve-unknown-fields` (nothing inside is pruned) and
/// `x-kubernetes-embedded-resource` (the API server checks `apiVersion`, `kind` and
/// `metadata`, as for a pod template).
pub(crate) fn embedded_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-embedded-resource": true,
    })
}

/// A list of `metav1.Condition` keyed by `type` (`+listType=map`, `+listMapKey=type`), so
/// server-side apply lets each writer own its own conditions.
pub(crate) fn conditions(gen: &mut SchemaGenerator) -> Schema {
    let mut s =
        gen.subschema_for::<Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>>();
    s.insert("x-kubernetes-list-type".into(), "map".into());
    s.insert(
        "x-kubernetes-list-map-keys".into(),
        serde_json::json!(["type"]),
    );
    s
}

/// Test helpers shared by the kinds' tests.
#[cfg(test)]
pub(crate) mod testing;
