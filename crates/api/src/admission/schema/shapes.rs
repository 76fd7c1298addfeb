//! The shapes of a built-in kind's body: kube-apiserver decodes a built-in object into its Go
//! struct, so a value of the wrong JSON shape or type (a list where a map belongs, an object or
//! a number where a string does, 1.5 replicas) is refused with 400 `BadRequest` before anything else looks at it. Custom
//! resources are judged by their schema instead (422, [`super::values`]). `null` fits every
//! field, as it does for Go's decoder.

use serde_json::Value;

use crate::schema::lookup::{FieldShape, ScalarType, SchemaLookup};

/// The first value in `obj` whose JSON shape does not fit the field of `root_type` that holds
/// it: its path (`spec.replicas`, `data.a`) and what is wrong with it.
pub fn misshapen(lookup: &dyn SchemaLookup, root_type: &str, obj: &Value) -> Option<String> {
    walk(lookup, root_type, obj, "")
}

fn walk(lookup: &dyn SchemaLookup, type_name: &str, v: &Value, path: &str) -> Option<String> {
    let obj = v.as_object()?;
    for (k, child) in obj {
        if path.is_empty() && (k == "apiVersion" || k == "kind") {
            continue;
        }
        let Some(info) = lookup.field(type_name, k) else {
            continue;
        };
        let here = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        if let Some(wrong) = mismatch(info.shape, info.scalar, child) {
            return Some(format!("{here}: {wrong}"));
        }
        let item_shape = info.item_shape.unwrap_or(FieldShape::Unknown);
        let next = info.type_name.as_deref();
        let found = match (info.shape, child) {
            (FieldShape::Object, _) => next.and_then(|t| walk(lookup, t, child, &here)),
            (FieldShape::List, Value::Array(items)) => {
                items.iter().enumerate().find_map(|(i, item)| {
                    let at = format!("{here}[{i}]");
                    match (mismatch(item_shape, info.scalar, item), next) {
                        (Some(wrong), _) => Some(format!("{at}: {wrong}")),
                        (None, Some(t)) if item_shape == FieldShape::Object => {
                            walk(lookup, t, item, &at)
                        }
                        _ => None,
                    }
                })
            }
            (FieldShape::Map, Value::Object(entries)) => entries.iter().find_map(|(mk, mv)| {
                let at = format!("{here}.{mk}");
                match (mismatch(item_shape, info.scalar, mv), next) {
                    (Some(wrong), _) => Some(format!("{at}: {wrong}")),
                    (None, Some(t)) if item_shape == FieldShape::Object => walk(lookup, t, mv, &at),
                    _ => None,
                }
            }),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// What is wrong with `v` as a value of a field of `shape` (holding `scalar`, for a scalar),
/// if anything.
fn mismatch(shape: FieldShape, scalar: Option<ScalarType>, v: &Value) -> Option<String> {
    let fits = match (shape, scalar) {
        (FieldShape::Unknown, _) => true,
        _ if v.is_null() => true,
        (FieldShape::Object | FieldShape::Map, _) => v.is_object(),
        (FieldShape::List, _) => v.is_array(),
        (FieldShape::Scalar, None) => !v.is_object() && !v.is_array(),
        (FieldShape::Scalar, Some(ScalarType::String)) => v.is_string(),
        (FieldShape::Scalar, Some(ScalarType::Integer)) => v.is_i64() || v.is_u64(),
        (FieldShape::Scalar, Some(ScalarType::Number)) => v.is_number(),
        (FieldShape::Scalar, Some(ScalarType::Boolean)) => v.is_boolean(),
    };
    let wanted = match (shape, scalar) {
        (FieldShape::Object, _) => "an object",
        (FieldShape::Map, _) => "a map",
        (FieldShape::List, _) => "a list",
        (FieldShape::Scalar, Some(ScalarType::String)) => "a string",
        (FieldShape::Scalar, Some(ScalarType::Integer)) => "a whole number",
        (FieldShape::Scalar, Some(ScalarType::Number)) => "a number",
        (FieldShape::Scalar, Some(ScalarType::Boolean)) => "a boolean",
        (FieldShape::Scalar | FieldShape::Unknown, None) => "a string, number or boolean",
        (FieldShape::Unknown, Some(_)) => "anything",
    };
    (!fits).then(|| {
        format!(
            "cannot unmarshal {} into a field that holds {wanted}",
            json_type(v)
        )
    })
}

/// The JSON type of `v` as Go's decoder names it.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "fractional number",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::schema::SchemaSet;

    const CM: &str = "io.k8s.api.core.v1.ConfigMap";
    const DEPLOY: &str = "io.k8s.api.apps.v1.Deployment";

    #[test]
    fn values_of_the_wrong_shape_are_found_with_their_path() {
        let l = SchemaSet::default();
        let cm = |body: Value| misshapen(&l, CM, &body);
        assert_eq!(
            cm(json!({"metadata": {"name": "a"}, "data": ["x"]})).as_deref(),
            Some("data: cannot unmarshal array into a field that holds a map")
        );
        assert_eq!(
            cm(json!({"data": {"a": {"b": "c"}}})).as_deref(),
            Some("data.a: cannot unmarshal object into a field that holds a string")
        );
        assert_eq!(
            cm(json!({"metadata": {"labels": "x"}})).as_deref(),
            Some("metadata.labels: cannot unmarshal string into a field that holds a map")
        );
        let d = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "ports": {"containerPort": 80}}]}}}});
        assert_eq!(
            misshapen(&l, DEPLOY, &d).as_deref(),
            Some("spec.template.spec.containers[0].ports: cannot unmarshal object into a field that holds a list")
        );
    }

    #[test]
    fn scalars_of_the_wrong_type_are_found() {
        let l = SchemaSet::default();
        let d = |spec: Value| misshapen(&l, DEPLOY, &json!({ "spec": spec }));
        assert_eq!(
            misshapen(&l, CM, &json!({"data": {"a": 1}})).as_deref(),
            Some("data.a: cannot unmarshal number into a field that holds a string")
        );
        assert_eq!(
            d(json!({"replicas": "3"})).as_deref(),
            Some("spec.replicas: cannot unmarshal string into a field that holds a whole number")
        );
        assert_eq!(
            d(json!({"replicas": 1.5})).as_deref(),
            Some("spec.replicas: cannot unmarshal fractional number into a field that holds a whole number")
        );
        assert_eq!(
            d(json!({"paused": "yes"})).as_deref(),
            Some("spec.paused: cannot unmarshal string into a field that holds a boolean")
        );
        assert_eq!(
            misshapen(&l, CM, &json!({"metadata": {"finalizers": [1]}})).as_deref(),
            Some(
                "metadata.finalizers[0]: cannot unmarshal number into a field that holds a string"
            )
        );
    }

    #[test]
    fn well_shaped_bodies_and_nulls_pass() {
        let l = SchemaSet::default();
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": null},
            "data": {"a": "1"}, "binaryData": {"x": null}, "unknownField": [1]});
        assert_eq!(misshapen(&l, CM, &cm), None);
        let d = json!({"spec": {"replicas": 2, "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {"spec": {"containers": [{"name": "c", "image": "i",
                "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}, "ports": [{"containerPort": 80}]}]}}}});
        assert_eq!(misshapen(&l, DEPLOY, &d), None);
    }
}
