//! Test helpers shared by the kinds' tests: a CRD's version and columns, and the checks every
//! CRD schema must pass (structural, described).

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

/// Panics unless every property below `schema` has a non-empty description.
pub(crate) fn assert_described(schema: &Value, path: &str) {
    if let Some(p) = schema["properties"].as_object() {
        for (k, v) in p {
            let here = format!("{path}.{k}");
            let d = v["description"].as_str().unwrap_or_default();
            assert!(!d.trim().is_empty(), "{here}: no description");
            assert_described(v, &here);
        }
    }
    for k in ["items", "additionalProperties"] {
        if schema[k].is_object() {
            assert_described(&schema[k], &format!("{path}[{k}]"));
        }
    }
}
