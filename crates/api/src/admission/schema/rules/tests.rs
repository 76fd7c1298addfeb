//! One table per rule feature: (schema, new, old, which rules, expected causes).

use serde_json::{json, Value};

use super::*;

type Case = (
    &'static str,
    Value,
    Value,
    Option<Value>,
    Rules,
    Vec<(&'static str, &'static str)>,
);

fn spec(rules: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "x-kubernetes-validations": rules,
        "properties": {
            "replicas": {"type": "integer"},
            "min": {"type": "integer"},
            "name": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "name is immutable"}
            ]},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer",
                    "x-kubernetes-validations": [{"rule": "self >= oldSelf", "message": "port may only grow"}]}}}}
        }
    }}})
}

#[test]
fn rules() {
    let min = json!([{"rule": "self.replicas >= self.min"}]);
    let cases: &[Case] = &[
        (
            "holds",
            spec(min.clone()),
            json!({"spec": {"replicas": 2, "min": 1}}),
            None,
            Rules::Plain,
            vec![],
        ),
        (
            "default message",
            spec(min.clone()),
            json!({"spec": {"replicas": 0, "min": 1}}),
            None,
            Rules::Plain,
            vec![(
                "spec",
                r#"Invalid value: "object": failed rule: self.replicas >= self.min"#,
            )],
        ),
        (
            "message, reason and fieldPath",
            spec(
                json!([{"rule": "self.replicas >= self.min", "message": "too few", "reason": "FieldValueForbidden", "fieldPath": ".replicas"}]),
            ),
            json!({"spec": {"replicas": 0, "min": 1}}),
            None,
            Rules::Plain,
            vec![("spec.replicas", "Forbidden: too few")],
        ),
        (
            "messageExpression",
            spec(
                json!([{"rule": "self.replicas >= self.min", "messageExpression": "'need ' + string(self.min)"}]),
            ),
            json!({"spec": {"replicas": 0, "min": 3}}),
            None,
            Rules::Plain,
            vec![("spec", r#"Invalid value: "object": need 3"#)],
        ),
        (
            "an evaluation error is kube's",
            spec(min.clone()),
            json!({"spec": {"replicas": 1}}),
            None,
            Rules::Plain,
            vec![("spec", "")],
        ),
        (
            "transition rules skip a create",
            spec(json!([])),
            json!({"spec": {"name": "a"}}),
            None,
            Rules::Transitions,
            vec![],
        ),
        (
            "plain walk skips transition rules",
            spec(json!([])),
            json!({"spec": {"name": "b"}}),
            Some(json!({"spec": {"name": "a"}})),
            Rules::Plain,
            vec![],
        ),
        (
            "transition on update",
            spec(json!([])),
            json!({"spec": {"name": "b"}}),
            Some(json!({"spec": {"name": "a"}})),
            Rules::Transitions,
            vec![("spec.name", r#"Invalid value: "string": name is immutable"#)],
        ),
        (
            "transition skips a field the old object lacks",
            spec(json!([])),
            json!({"spec": {"name": "b"}}),
            Some(json!({"spec": {}})),
            Rules::Transitions,
            vec![],
        ),
        (
            "map list items correlate by key",
            spec(json!([])),
            json!({"spec": {"ports": [{"name": "new", "port": 1}, {"name": "http", "port": 79}]}}),
            Some(json!({"spec": {"ports": [{"name": "http", "port": 80}]}})),
            Rules::Transitions,
            vec![(
                "spec.ports[1].port",
                r#"Invalid value: "integer": port may only grow"#,
            )],
        ),
    ];
    for (name, schema, new, old, which, want) in cases {
        let got = check(schema, new, old.as_ref(), *which);
        assert_eq!(got.len(), want.len(), "{name}: {got:?}");
        for ((f, m), (wf, wm)) in got.iter().zip(want) {
            assert_eq!(f, wf, "{name}");
            if wm.is_empty() {
                assert!(
                    m.starts_with("Invalid value: \"object\": ")
                        && m.ends_with("evaluating rule: self.replicas >= self.min"),
                    "{name}: {m}"
                );
            } else {
                assert_eq!(m, wm, "{name}");
            }
        }
    }
}
