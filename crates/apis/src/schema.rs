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
pub(crate) mod testing {
    use serde_json::Value;

    /// The first version of a CRD given as JSON.
    pub(crate) fn version(crd: &Value) -> &Value {
        &crd["spec"]["versions"][0]
    }

    /// The printer columns of a CRD's first version as (name, jsonPath).
    pub(crate) fn columns(crd: &Value) -> Vec<(String, String)> {
        version(crd)["additionalPrinterColumns"]
            .as_array()
            .map(|cols| {
                cols.iter()
                    .map(|c| {
                        let s = |k: &str| c[k].as_str().unwrap_or_default().to_string();
                        (s("name"), s("jsonPath"))
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Panics unless `schema` is structural as kube-apiserver requires: every node has a
    /// `type` (unless int-or-string, or preserve-unknown-fields), no `$ref`, and no
    /// `additionalProperties` beside `properties`.
    pub(crate) fn assert_structural(schema: &Value, path: &str) {
        let o = schema
            .as_object()
            .unwrap_or_else(|| panic!("{path}: not an object"));
        let flag = |k: &str| o.get(k).and_then(Value::as_bool).unwrap_or(false);
        assert!(!o.contains_key("$ref"), "{path}: $ref is not structural");
        assert!(
            o.contains_key("type")
                || flag("x-kubernetes-int-or-string")
                || flag("x-kubernetes-preserve-unknown-fields"),
            "{path}: no type in {schema}"
        );
        assert!(
            !(o.contains_key("properties") && o.contains_key("additionalProperties")),
            "{path}: both properties and additionalProperties"
        );
        if let Some(p) = o.get("properties").and_then(Value::as_object) {
            for (k, v) in p {
                assert_structural(v, &format!("{path}.{k}"));
            }
        }
        for k in ["items", "additionalProperties"] {
            if let Some(v) = o.get(k).filter(|v| v.is_object()) {
                assert_structural(v, &format!("{path}[{k}]"));
            }
        }
    }
}
