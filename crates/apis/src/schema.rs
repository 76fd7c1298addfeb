//! Schema helpers for fields whose Rust type says less than the CRD must, and the serde
//! helper the kinds share for leaving zero counts out of their JSON.

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

/// A JSON object kept as it is: `type: object` with `x-kubernetes-preserve-unknown-fields`
/// (nothing inside is pruned), e.g. a member's `status` of an object.
pub(crate) fn raw_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true,
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

/// `skip_serializing_if` for counts whose zero means "not set" (replicas, spread bounds), so
/// the JSON carries them only when they say something.
pub(crate) fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// Test helpers shared by the kinds' tests.
#[cfg(test)]
pub(crate) mod testing;

/// An `intstr.IntOrString` (`maxConcurrency: 2` or `"25%"`): `x-kubernetes-int-or-string`,
/// as Kubernetes' own schemas say it.
pub(crate) fn int_or_string(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "x-kubernetes-int-or-string": true })
}
