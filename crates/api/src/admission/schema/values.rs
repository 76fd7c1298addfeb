//! Values of custom resources against their CRD's structural schema.
//!
//! kube-apiserver fills in `default`s and refuses a custom resource whose values break its
//! schema with 422 Invalid. This walks the published definition for `type`, `enum`,
//! `required`, `nullable` and `default`, and has [`keywords`] check each node's bounds
//! (`minimum`, `maxLength`, `pattern`, `maxItems`, …); `$ref` nodes (only
//! `metadata`, validated elsewhere) are skipped, and int-or-string takes either.
//! Causes are (field path, message) in kube-apiserver's words.

use serde_json::{Map, Value};

use super::keywords;

/// Fill in defaults in `obj` and return what breaks `schema`, as (field, message) causes.
pub fn default_and_check(schema: &Value, obj: &mut Value) -> Vec<(String, String)> {
    let mut causes = Vec::new();
    walk(schema, obj, "", &mut causes, None);
    causes
}

/// The part of `schema` defaulting needs: the nodes with a `default` and those above them,
/// each with its `nullable` and `x-kubernetes-int-or-string`; `None` when nothing has a
/// default. [`default_and_check`] with it fills in the same defaults as with the whole
/// schema, looking at a few fields instead of every one; it drops only the nulls on its way
/// (the whole schema drops a null wherever the schema does not allow one).
pub fn defaults_plan(schema: &Value) -> Option<Value> {
    let s = schema.as_object()?;
    if s.contains_key("$ref") {
        return None;
    }
    let mut plan = Map::new();
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        let kept: Map<String, Value> = props
            .iter()
            .filter_map(|(k, p)| Some((k.clone(), defaults_plan(p)?)))
            .collect();
        if !kept.is_empty() {
            plan.insert("properties".into(), Value::Object(kept));
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = s.get(key).and_then(defaults_plan) {
            plan.insert(key.into(), inner);
        }
    }
    if plan.is_empty() && !s.contains_key("default") {
        return None;
    }
    for key in ["default", "nullable", "x-kubernetes-int-or-string"] {
        if let Some(v) = s.get(key) {
            plan.insert(key.into(), v.clone());
        }
    }
    Some(Value::Object(plan))
}

/// As [`default_and_check`] for an update's `new` object, leaving out the parts where it
/// equals `old`: the causes found there would all be at fields the update does not change,
/// which ratcheting lets through ([`super::ratchet`]), so they are not looked for (a status
/// write does not walk the spec).
pub fn changed_causes(schema: &Value, new: &mut Value, old: &Value) -> Vec<(String, String)> {
    let mut causes = Vec::new();
    walk(schema, new, "", &mut causes, Some(old));
    causes
}

/// Whether `v` is the old object's value where the walk is (a walk without an old object, or
/// below a part it lacks, looks at everything).
fn unchanged(v: &Value, old: Option<&Value>) -> bool {
    old.is_some_and(|o| o == v)
}

fn walk(
    schema: &Value,
    v: &mut Value,
    path: &str,
    causes: &mut Vec<(String, String)>,
    old: Option<&Value>,
) {
    if unchanged(v, old) {
        return;
    }
    let Some(s) = schema.as_object() else { return };
    if s.contains_key("$ref") {
        return;
    }
    let flag = |k: &str| s.get(k).and_then(Value::as_bool).unwrap_or(false);
    if v.is_null() {
        // kube-openapi's type validator: null passes a nullable node or one without a type.
        if !flag("nullable") && !path.is_empty() {
            let message = match s.get("type").and_then(Value::as_str) {
                Some(t) => type_message(path, v, t),
                None => return,
            };
            causes.push((path.to_owned(), message));
        }
        return;
    }
    if flag("x-kubernetes-int-or-string") {
        if !(v.is_string() || v.is_i64() || v.is_u64()) {
            causes.push((path.to_owned(), type_message(path, v, "integer or string")));
            return;
        }
        keywords::check(s, v, path, causes);
        return;
    }
    if let Some(t) = s.get("type").and_then(Value::as_str) {
        if !has_type(v, t) {
            causes.push((path.to_owned(), type_message(path, v, t)));
            return;
        }
    }
    if let Some(allowed) = s.get("enum").and_then(Value::as_array) {
        if !allowed.contains(v) {
            // apimachinery's NotSupported quotes every allowed value, non-strings as JSON.
            let list: Vec<String> = allowed
                .iter()
                .map(|a| match a {
                    Value::String(_) => a.to_string(),
                    other => Value::String(other.to_string()).to_string(),
                })
                .collect();
            causes.push((
                path.to_owned(),
                format!(
                    "Unsupported value: {}: supported values: {}",
                    keywords::shown(v),
                    list.join(", ")
                ),
            ));
        }
    }
    keywords::check(s, v, path, causes);
    match v {
        Value::Object(o) => object(s, o, path, causes, old),
        Value::Array(items) => {
            if let Some(item) = s.get("items") {
                for (i, x) in items.iter_mut().enumerate() {
                    let old = old.and_then(|o| o.get(i));
                    if unchanged(x, old) {
                        continue;
                    }
                    walk(item, x, &format!("{path}[{i}]"), causes, old);
                }
            }
        }
        _ => {}
    }
}

fn object(
    s: &Map<String, Value>,
    o: &mut Map<String, Value>,
    path: &str,
    causes: &mut Vec<(String, String)>,
    old: Option<&Value>,
) {
    let join = |k: &str| {
        if path.is_empty() {
            k.to_owned()
        } else {
            format!("{path}.{k}")
        }
    };
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (k, p) in props {
            let nullable = p.get("nullable").and_then(Value::as_bool).unwrap_or(false);
            // As kube-apiserver: a null where null is not allowed is dropped, then defaulted.
            if o.get(k).is_some_and(Value::is_null) && !nullable {
                o.remove(k);
            }
            if !o.contains_key(k) {
                if let Some(d) = p.get("default") {
                    o.insert(k.clone(), d.clone());
                }
            }
            let old = old.and_then(|o| o.get(k));
            if let Some(child) = o.get_mut(k) {
                if !unchanged(child, old) {
                    walk(p, child, &join(k), causes, old);
                }
            }
        }
    }
    if let Some(add) = s.get("additionalProperties").filter(|a| a.is_object()) {
        for (k, child) in o.iter_mut() {
            let old = old.and_then(|o| o.get(k));
            if unchanged(child, old) {
                continue;
            }
            walk(add, child, &format!("{path}[{k}]"), causes, old);
        }
    }
    // An embedded resource's apiVersion and kind (required in the published schema) are
    // [`embedded`]'s, worded as kube's; the root's are checked with the request.
    let embedded = !path.is_empty()
        && s.get("x-kubernetes-embedded-resource")
            .and_then(Value::as_bool)
            == Some(true);
    if embedded {
        super::embedded::check(o, path, causes);
    }
    if let Some(required) = s.get("required").and_then(Value::as_array) {
        for r in required.iter().filter_map(Value::as_str) {
            if embedded && (r == "apiVersion" || r == "kind") {
                continue;
            }
            if !o.contains_key(r) {
                causes.push((join(r), "Required value".into()));
            }
        }
    }
}

fn has_type(v: &Value, t: &str) -> bool {
    match t {
        "string" => v.is_string(),
        // As kube-openapi, a float with no fraction (`2.0`) is an integer.
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        _ => true,
    }
}

fn type_message(path: &str, v: &Value, want: &str) -> String {
    let got = match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    format!("Invalid value: \"{got}\": {path} in body must be of type {want}: \"{got}\"")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "required": ["spec"], "properties": {
            "metadata": {"$ref": "#/components/schemas/ObjectMeta"},
            "spec": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"},
                "mode": {"type": "string", "enum": ["Push", "Pull"], "default": "Pull"},
                "count": {"type": "integer"},
                "size2": {"type": "integer", "minimum": 1, "enum": [1, 2, 0]},
                "tags": {"type": "array", "items": {"type": "string"}},
                "tpl": {"type": "object", "x-kubernetes-embedded-resource": true, "required": ["kind", "apiVersion"],
                    "x-kubernetes-preserve-unknown-fields": true},
                "size": {"x-kubernetes-int-or-string": true},
                "note": {"type": "string", "nullable": true},
                "items": {"type": "array", "items": {"type": "object", "properties": {"effect": {"type": "string", "enum": ["A"]}}}},
                "quantities": {"type": "object", "additionalProperties": {"type": "integer"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": {"n": {"type": "integer"}}}
            }}
        }})
    }

    /// (name, object, expected causes as (field, message)).
    type Case = (&'static str, Value, Vec<(&'static str, &'static str)>);

    #[test]
    fn cases() {
        let cases: &[Case] = &[
            (
                "valid, defaulted",
                json!({"metadata": {"name": 1}, "spec": {"name": "a", "size": "1Gi", "note": null, "free": {"x": [1]}}}),
                vec![],
            ),
            (
                "bad enum",
                json!({"spec": {"name": "a", "mode": "Sideways"}}),
                vec![(
                    "spec.mode",
                    r#"Unsupported value: "Sideways": supported values: "Push", "Pull""#,
                )],
            ),
            (
                "wrong type",
                json!({"spec": {"name": "a", "count": "3"}}),
                vec![(
                    "spec.count",
                    r#"Invalid value: "string": spec.count in body must be of type integer: "string""#,
                )],
            ),
            (
                "bounds under the walk",
                json!({"spec": {"name": "a", "size2": 0}}),
                vec![(
                    "spec.size2",
                    "Invalid value: 0: spec.size2 in body should be greater than or equal to 1",
                )],
            ),
            (
                "non-string enum values are quoted",
                json!({"spec": {"name": "a", "size2": 3}}),
                vec![(
                    "spec.size2",
                    r#"Unsupported value: 3: supported values: "1", "2", "0""#,
                )],
            ),
            (
                "a float with no fraction is an integer",
                json!({"spec": {"name": "a", "count": 2.0}}),
                vec![],
            ),
            (
                "null item of a non-nullable type",
                json!({"spec": {"name": "a", "tags": ["x", null]}}),
                vec![(
                    "spec.tags[1]",
                    r#"Invalid value: "null": spec.tags[1] in body must be of type string: "null""#,
                )],
            ),
            (
                "embedded resource: apiVersion and kind worded as kube's",
                json!({"spec": {"name": "a", "tpl": {"kind": "ConfigMap"}}}),
                vec![("spec.tpl.apiVersion", "Required value: must not be empty")],
            ),
            (
                "required",
                json!({"spec": {}}),
                vec![("spec.name", "Required value")],
            ),
            ("missing spec", json!({}), vec![("spec", "Required value")]),
            (
                "in lists",
                json!({"spec": {"name": "a", "items": [{"effect": "A"}, {"effect": "B"}]}}),
                vec![(
                    "spec.items[1].effect",
                    r#"Unsupported value: "B": supported values: "A""#,
                )],
            ),
            (
                "in maps",
                json!({"spec": {"name": "a", "quantities": {"cpu": 1, "gpu": true}}}),
                vec![(
                    "spec.quantities[gpu]",
                    r#"Invalid value: "boolean": spec.quantities[gpu] in body must be of type integer: "boolean""#,
                )],
            ),
            (
                "declared fields under preserve-unknown-fields",
                json!({"spec": {"name": "a", "free": {"n": 1.5}}}),
                vec![(
                    "spec.free.n",
                    r#"Invalid value: "number": spec.free.n in body must be of type integer: "number""#,
                )],
            ),
            (
                "int-or-string",
                json!({"spec": {"name": "a", "size": [1]}}),
                vec![(
                    "spec.size",
                    r#"Invalid value: "array": spec.size in body must be of type integer or string: "array""#,
                )],
            ),
        ];
        for (name, obj, want) in cases {
            let mut obj = obj.clone();
            let got = default_and_check(&schema(), &mut obj);
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(f, m)| (f.to_string(), m.to_string()))
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn defaults_fill_missing_and_null_fields() {
        let mut obj = json!({"spec": {"name": "a", "mode": null}});
        assert!(default_and_check(&schema(), &mut obj).is_empty());
        assert_eq!(obj["spec"]["mode"], "Pull");
        assert!(obj["spec"].get("note").is_none());
    }

    #[test]
    fn the_defaults_plan_fills_in_what_the_whole_schema_does() {
        let mut schema = schema();
        // Defaults below lists, maps and objects, and in an object that is itself defaulted.
        schema["properties"]["spec"]["properties"]["items"]["items"]["properties"]["effect"]
            ["default"] = json!("A");
        schema["properties"]["spec"]["properties"]["quantities"]["additionalProperties"]
            ["default"] = json!(1);
        schema["properties"]["spec"]["properties"]["limits"] = json!({"type": "object",
            "default": {}, "properties": {"cpu": {"type": "string", "default": "1"}}});
        let plan = defaults_plan(&schema).expect("the schema has defaults");
        assert!(plan["properties"]["spec"]["properties"]
            .get("name")
            .is_none());
        assert!(plan["properties"].get("metadata").is_none());
        let objects = [
            json!({}),
            json!({"spec": {"name": "a"}}),
            json!({"spec": {"name": "a", "mode": "Push", "items": [{}, {"effect": "A"}],
                "quantities": {"a": 2}, "limits": {"cpu": "2"}}}),
            json!({"spec": {"items": "not a list", "quantities": [], "limits": {}}}),
            json!({"spec": "wrong", "status": {"x": 1}}),
        ];
        for obj in objects {
            let (mut whole, mut planned) = (obj.clone(), obj.clone());
            default_and_check(&schema, &mut whole);
            default_and_check(&plan, &mut planned);
            assert_eq!(planned, whole, "{obj}");
        }
        assert!(
            defaults_plan(&json!({"type": "object", "properties": {"a": {"type": "string"}}}))
                .is_none()
        );
    }
}
