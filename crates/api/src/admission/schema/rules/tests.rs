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

#[test]
fn a_crd_with_a_rule_that_does_not_compile_is_refused() {
    let crd = json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": {
        "type": "object", "properties": {"spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.a >= 1"},
                {"rule": "self.a >", "message": "m"},
                {"rule": "true", "messageExpression": "'x' +"}
            ],
            "properties": {"a": {"type": "integer"}}}}}}}]}});
    let causes = crd_causes(&crd);
    let fields: Vec<&str> = causes.iter().map(|(f, _)| f.as_str()).collect();
    let at = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations";
    assert_eq!(
        fields,
        vec![
            format!("{at}[1].rule"),
            format!("{at}[2].messageExpression")
        ]
    );
    assert!(causes[0].1.starts_with(
        r#"Invalid value: apiextensions.ValidationRule{Rule:"self.a >", Message:"m", "#
    ));
    assert!(
        causes[0].1.contains(": compilation failed: "),
        "{}",
        causes[0].1
    );
    assert!(crd_causes(&json!({"spec": {"versions": [{"name": "v1"}]}})).is_empty());
    let unique = json!({"spec": {"versions": [{"schema": {"openAPIV3Schema": {"type": "object",
        "properties": {"xs": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}}}}]}});
    assert_eq!(
        crd_causes(&unique),
        vec![(
            "spec.versions[0].schema.openAPIV3Schema.properties[xs].uniqueItems".to_owned(),
            "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic".to_owned()
        )]
    );
}

#[test]
fn optional_old_self_runs_without_an_old_value() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "size": {"type": "integer", "x-kubernetes-validations": [{
            "rule": "oldSelf.hasValue() ? self >= oldSelf.value() : self < 10",
            "message": "starts below 10, then only grows", "optionalOldSelf": true}]}}}}});
    let msg = r#"Invalid value: "integer": starts below 10, then only grows"#;
    let create = |size: i64| {
        check(
            &schema,
            &json!({"spec": {"size": size}}),
            None,
            Rules::Create,
        )
    };
    assert!(create(3).is_empty());
    assert_eq!(create(12), vec![("spec.size".to_owned(), msg.to_owned())]);
    let update = |old: Value, size: i64| {
        check(
            &schema,
            &json!({"spec": {"size": size}}),
            Some(&old),
            Rules::Transitions,
        )
    };
    assert!(update(json!({"spec": {"size": 3}}), 20).is_empty());
    assert_eq!(update(json!({"spec": {"size": 3}}), 2).len(), 1);
    // A field the update adds: no old value, oldSelf is none.
    assert_eq!(update(json!({"spec": {}}), 12).len(), 1);
    // The plain walk of an update's object leaves transition rules alone.
    assert!(check(&schema, &json!({"spec": {"size": 12}}), None, Rules::Plain).is_empty());
}

#[test]
fn kubernetes_library_rules_are_enforced() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "array",
        "items": {"type": "integer"},
        "x-kubernetes-validations": [{"rule": "self.isSorted()"}, {"rule": "size(self) < 3"}]}}});
    let got = check(&schema, &json!({"spec": [3, 1, 2]}), None, Rules::Create);
    let shown: Vec<&str> = got.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        shown,
        [
            r#"Invalid value: "array": failed rule: self.isSorted()"#,
            r#"Invalid value: "array": failed rule: size(self) < 3"#
        ]
    );
    assert!(check(&schema, &json!({"spec": [1, 2]}), None, Rules::Create).is_empty());
}

#[test]
fn flotillas_own_crds_pass() {
    for crd in flotilla_apis::crds().unwrap() {
        assert!(crd_causes(&crd).is_empty(), "{}", crd["metadata"]["name"]);
    }
}

#[test]
fn evaluations_are_held_to_kubes_cost_limits() {
    let rule = json!({"rule": "self.all(x, self.all(y, y == x))"});
    let schema = |n: usize| {
        json!({"type": "object", "properties": {"spec": {"type": "array",
            "items": {"type": "integer"}, "x-kubernetes-validations": vec![rule.clone(); n]}}})
    };
    // One rule past the per-call limit stops there.
    let big = json!({"spec": vec![1; 725]});
    let got = check(&schema(3), &big, None, Rules::Create);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0]
        .1
        .contains("call cost exceeds limit for rule: self.all(x, self.all(y, y == x))"));
    // Rules each under it, together past the object's budget.
    let mid = json!({"spec": vec![1; 300]});
    assert!(check(&schema(2), &mid, None, Rules::Create).is_empty());
    let got = check(&schema(40), &mid, None, Rules::Create);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].1.ends_with("validation failed due to running out of cost budget, no further validation rules will be run"));
}

#[test]
fn two_variable_comprehensions_are_enforced_and_unknown_constructs_inert() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "array",
        "items": {"type": "integer"},
        "x-kubernetes-validations": [{"rule": "self.all(i, v, v > i)"},
            // Not a macro (four arguments): read as a call on undeclared names, so inert.
            {"rule": "self.all(i, v, w, true)"}, {"rule": "size(self) < 3"}]}}});
    let got = check(&schema, &json!({"spec": [3, 1, 2]}), None, Rules::Create);
    let shown: Vec<&str> = got.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        shown,
        [
            r#"Invalid value: "array": failed rule: self.all(i, v, v > i)"#,
            r#"Invalid value: "array": failed rule: size(self) < 3"#
        ]
    );
}
