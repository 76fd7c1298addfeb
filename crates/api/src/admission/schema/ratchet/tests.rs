//! Ratcheting: (old, new, expected fields refused).

use serde_json::{json, Value};

use super::*;

fn schema() -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object",
    "x-kubernetes-validations": [{"rule": "self.size <= 5", "message": "at most 5"}],
    "properties": {
        "size": {"type": "integer", "minimum": 1},
        "mode": {"type": "string", "enum": ["A"]},
        "name": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "immutable"}]}
    }}}})
}

#[test]
fn unchanged_values_ratchet_and_transitions_do_not() {
    let cases: &[(&str, Value, Value, Vec<&str>)] = &[
        (
            "unchanged bad value is let through",
            json!({"spec": {"size": 0, "mode": "A"}}),
            json!({"spec": {"size": 0, "mode": "A", "name": "x"}}),
            vec![],
        ),
        (
            "a changed bad value is refused",
            json!({"spec": {"size": 2}}),
            json!({"spec": {"size": 0}}),
            vec!["spec.size"],
        ),
        (
            "a new bad value is refused",
            json!({"spec": {"size": 2}}),
            json!({"spec": {"size": 2, "mode": "B"}}),
            vec!["spec.mode"],
        ),
        (
            "a rule on a changed node",
            json!({"spec": {"size": 2}}),
            json!({"spec": {"size": 6}}),
            vec!["spec"],
        ),
        (
            "a rule on an unchanged node",
            json!({"spec": {"size": 6}}),
            json!({"spec": {"size": 6}}),
            vec![],
        ),
        (
            "transition rules",
            json!({"spec": {"size": 2, "name": "a"}}),
            json!({"spec": {"size": 2, "name": "b"}}),
            vec!["spec.name"],
        ),
    ];
    for (name, old, new, want) in cases {
        let got: Vec<String> = causes(&schema(), true, old, &mut new.clone())
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        assert_eq!(got, *want, "{name}");
    }
}

#[test]
fn paths() {
    let v = json!({"spec": {"items": [{"name": "a"}], "labels": {"k.io/x": "v"}}});
    assert_eq!(at(&v, "spec.items[0].name"), Some(&json!("a")));
    assert_eq!(at(&v, "spec.labels[k.io/x]"), Some(&json!("v")));
    assert_eq!(at(&v, "<nil>"), Some(&v));
    assert_eq!(at(&v, "spec.items[3]"), None);
    assert_eq!(at(&v, "spec.missing"), None);
}

/// Leaving out the unchanged parts finds what the whole walk keeps, on every case of a table
/// of old and new objects with bad values, nulls, defaults and lists.
#[test]
fn the_walk_of_changed_parts_keeps_what_the_whole_walk_keeps() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "required": ["size"], "properties": {
            "size": {"type": "integer", "minimum": 1},
            "mode": {"type": "string", "enum": ["A"], "default": "A"},
            "items": {"type": "array", "items": {"type": "object", "properties": {
                "n": {"type": "integer", "maximum": 3}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 2}},
        }},
        "status": {"type": "object", "properties": {"phase": {"type": "string", "enum": ["Ok"]}}},
    }});
    let objects = [
        json!({}),
        json!({"spec": {"size": 0}}),
        json!({"spec": {"size": 2, "mode": "B"}}),
        json!({"spec": {"size": 2, "mode": null}}),
        json!({"spec": {"mode": "A"}, "status": {"phase": "Bad"}}),
        json!({"spec": {"size": 0, "items": [{"n": 9}, {"n": 1}]}, "status": {"phase": "Ok"}}),
        json!({"spec": {"size": 0, "items": [{"n": 1}, {"n": 9}, {"n": 7}]}}),
        json!({"spec": {"size": 1, "labels": {"a": "long", "b": "ok"}}, "status": {"phase": "Ok"}}),
        json!({"spec": {"size": 1, "labels": {"a": "long", "b": "longer"}}}),
        json!({"spec": "wrong", "status": {"phase": "Bad"}}),
    ];
    for old in &objects {
        for new in &objects {
            let mut whole: Vec<(String, String)> =
                values::default_and_check(&schema, &mut new.clone())
                    .into_iter()
                    .filter(|(field, _)| at(new, field) != at(old, field))
                    .collect();
            let mut changed: Vec<(String, String)> =
                values::changed_causes(&schema, &mut new.clone(), old)
                    .into_iter()
                    .filter(|(field, _)| at(new, field) != at(old, field))
                    .collect();
            whole.sort();
            changed.sort();
            assert_eq!(whole, changed, "old {old}, new {new}");
        }
    }
}
