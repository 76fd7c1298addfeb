//! `spec.behavior` in the annotation kube writes it to: the JSON of kube's internal type,
//! which has no JSON names, so its keys are Go's field names.

use serde_json::{json, Value};

/// v2 behavior field ↔ the Go field name kube's annotation holds it under (the annotation is
/// the JSON of kube's internal type, which has no JSON names).
const BEHAVIOR_FIELDS: &[(&str, &str)] = &[
    ("scaleUp", "ScaleUp"),
    ("scaleDown", "ScaleDown"),
    ("stabilizationWindowSeconds", "StabilizationWindowSeconds"),
    ("selectPolicy", "SelectPolicy"),
    ("policies", "Policies"),
    ("type", "Type"),
    ("value", "Value"),
    ("periodSeconds", "PeriodSeconds"),
];

/// The behavior as kube's annotation writes it: Go field names, unset pointers as null.
pub(super) fn behavior_to_go(b: &Value) -> Value {
    let rules = |r: &Value| {
        if !r.is_object() {
            return Value::Null;
        }
        let policies = r.get("policies").and_then(Value::as_array).map(|ps| {
            let go: Vec<Value> = ps
                .iter()
                .map(|p| json!({"Type": p["type"], "Value": p["value"], "PeriodSeconds": p["periodSeconds"]}))
                .collect();
            Value::Array(go)
        });
        json!({
            "StabilizationWindowSeconds": r.get("stabilizationWindowSeconds").cloned().unwrap_or(Value::Null),
            "SelectPolicy": r.get("selectPolicy").cloned().unwrap_or(Value::Null),
            "Policies": policies.unwrap_or(Value::Null),
        })
    };
    json!({"ScaleUp": rules(&b["scaleUp"]), "ScaleDown": rules(&b["scaleDown"])})
}

/// The behavior from kube's annotation (Go decodes field names case-insensitively).
pub(super) fn behavior_from_go(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .filter_map(|(k, v)| {
                    let (json_name, _) = BEHAVIOR_FIELDS
                        .iter()
                        .find(|(_, go)| go.eq_ignore_ascii_case(k))?;
                    Some((json_name.to_string(), behavior_from_go(v)))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(behavior_from_go).collect()),
        other => other.clone(),
    }
}
