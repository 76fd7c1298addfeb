//! A CRD's rules judged at its creation, on the upstream e2e suite's schemas.

use serde_json::{json, Value};

use super::*;

fn crd(schema: Value) -> Value {
    json!({"spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": schema}}]}})
}

fn spec_with(rules: Value, props: Value) -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": rules, "properties": props}}})
}

/// The e2e suite's schema of valid rules (lists bounded, Kubernetes' list functions).
#[test]
fn the_suites_valid_rules_pass() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-validations": [
            {"rule": "self.x + self.y > 0"},
            {"rule": "self.firstArray.isSorted() && self.secondArray.isSorted() && ((self.firstArray.sum() + self.secondArray.sum()) % 2 == 0)"},
            {"rule": "self.largeArray.all(x, self.largeArray.all(y, y == x))"}],
         "properties": {"x": {"type": "integer"}, "y": {"type": "integer"},
            "firstArray": {"type": "array", "maxItems": 1000, "items": {"type": "integer"}},
            "secondArray": {"type": "array", "maxItems": 1000, "items": {"type": "integer"}},
            "largeArray": {"type": "array", "maxItems": 725, "items": {"type": "integer"}}}},
        "status": {"type": "object", "x-kubernetes-validations": [
            {"rule": "self.health == 'ok' || self.health == 'unhealthy'"}],
         "properties": {"health": {"type": "string"}}}}});
    assert_eq!(crd_causes(&crd(schema)), Vec::<(String, String)>::new());
}

#[test]
fn refused_rules() {
    let at =
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule";
    let props = json!({"x": {"type": "integer"}, "foo-bar": {"type": "string"}});
    let cases = [
        ("self = 42", "Syntax error"),
        ("self.z == 100", "undefined field 'z'"),
        ("self.x + 1", "cel expression must evaluate to a bool"),
        (
            "self.x == 'a'",
            "found no matching overload for '_==_' applied to '(int, string)'",
        ),
    ];
    for (rule, wanted) in cases {
        let causes = crd_causes(&crd(spec_with(json!([{"rule": rule}]), props.clone())));
        assert_eq!(causes.len(), 1, "{rule}: {causes:?}");
        assert_eq!(causes[0].0, at, "{rule}");
        assert!(
            causes[0]
                .1
                .starts_with("Invalid value: apiextensions.ValidationRule{Rule:"),
            "{rule}: {}",
            causes[0].1
        );
        assert!(causes[0].1.contains(wanted), "{rule}: {}", causes[0].1);
    }
    // Escaped names, the root's metadata, and has() are known to the check.
    for rule in ["self.foo__dash__bar == 'a'", "has(self.x)", "self.x > 1.5"] {
        let causes = crd_causes(&crd(spec_with(json!([{"rule": rule}]), props.clone())));
        assert!(causes.is_empty(), "{rule}: {causes:?}");
    }
    let root = json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('a') && self.kind != ''"}]});
    assert!(crd_causes(&crd(root)).is_empty());
}

#[test]
fn unbounded_rules_exceed_the_budget() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "x": {"type": "array", "items": {"type": "array", "items": {"type": "string"},
            "x-kubernetes-validations": [{"rule": "self.all(s, s == 'string constant')"}]}}}}}});
    let causes = crd_causes(&crd(schema.clone()));
    let rule_at = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[x].items.x-kubernetes-validations[0].rule";
    assert!(causes.iter().any(|(at, m)| at == rule_at
        && m == "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"), "{causes:?}");
    assert!(causes
        .iter()
        .any(|(at, m)| at == "spec.versions[0].schema.openAPIV3Schema"
            && m.contains("estimated rule cost total for entire OpenAPIv3 schema exceeds budget")));
    // Bounds make the same rule affordable.
    let mut bounded = schema;
    let x = bounded
        .pointer_mut("/properties/spec/properties/x")
        .unwrap();
    x["maxItems"] = json!(10);
    x["items"]["maxItems"] = json!(10);
    x["items"]["items"]["maxLength"] = json!(64);
    assert!(crd_causes(&crd(bounded)).is_empty());
}

#[test]
fn old_self_rules() {
    let props = json!({"x": {"type": "integer"}});
    let optional = json!([{"rule": "self.x > 0", "optionalOldSelf": true}]);
    let causes = crd_causes(&crd(spec_with(optional, props.clone())));
    assert_eq!(causes.len(), 1);
    assert!(causes[0]
        .0
        .ends_with("x-kubernetes-validations[0].optionalOldSelf"));
    assert!(causes[0]
        .1
        .ends_with("may not be set if oldSelf is not used in rule"));
    let fine = json!([{"rule": "!oldSelf.hasValue() || self.x >= oldSelf.value().x", "optionalOldSelf": true}]);
    assert!(crd_causes(&crd(spec_with(fine, props))).is_empty());
    let atomic = json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 5,
        "items": {"type": "integer", "x-kubernetes-validations": [{"rule": "self >= oldSelf"}]}}}});
    let causes = crd_causes(&crd(atomic));
    assert!(causes[0].1.contains("oldSelf cannot be used on the uncorrelatable portion of the schema within spec.versions[0].schema.openAPIV3Schema.properties[l]"), "{causes:?}");
}

#[test]
fn budget_messages_as_kube() {
    assert_eq!(
        budget_message("estimated rule cost", 12_000_000, 10_000_000),
        "estimated rule cost exceeds budget by factor of 1.200000x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    );
    assert!(budget_message("c", 25, 10).contains("factor of 2.5x"));
}

#[test]
fn rule_fields() {
    let props = json!({"x": {"type": "integer"}, "l": {"type": "array", "items": {"type": "object",
        "properties": {"n": {"type": "string"}}}}, "m": {"type": "object", "additionalProperties": {"type": "string"}}});
    let at = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]";
    let cases = [
        (
            json!({"rule": " "}),
            ".rule",
            "Required value: rule is not specified",
        ),
        (
            json!({"rule": "true", "message": "a\nb"}),
            ".message",
            "message must not contain line breaks",
        ),
        (
            json!({"rule": "true", "reason": "Nope"}),
            ".reason",
            r#"Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired""#,
        ),
        (
            json!({"rule": "true", "fieldPath": ".y"}),
            ".fieldPath",
            r#"Invalid value: ".y": fieldPath must be a valid path"#,
        ),
    ];
    for (rule, field, wanted) in cases {
        let causes = crd_causes(&crd(spec_with(json!([rule]), props.clone())));
        assert_eq!(causes.len(), 1, "{wanted}: {causes:?}");
        assert_eq!(causes[0].0, format!("{at}{field}"));
        assert!(causes[0].1.ends_with(wanted), "{}", causes[0].1);
    }
    for fp in [".x", "x", ".l[0].n", ".m.anything", "m['a.b']"] {
        let rule = json!([{"rule": "true", "fieldPath": fp}]);
        assert!(
            crd_causes(&crd(spec_with(rule, props.clone()))).is_empty(),
            "{fp}"
        );
    }
}

#[test]
fn an_update_is_refused_only_for_what_it_brings() {
    let bad = crd(spec_with(
        json!([{"rule": "self.z == 1"}]),
        json!({"x": {"type": "integer"}}),
    ));
    assert_eq!(crd_causes_since(None, &bad).len(), 1);
    // A CRD stored with the problem (before the check) keeps taking status and finalizer writes.
    let mut status = bad.clone();
    status["status"] = json!({"conditions": [{"type": "Established", "status": "True"}]});
    assert!(crd_causes_since(Some(&bad), &status).is_empty());
    // A new problem is refused.
    let mut worse = bad.clone();
    worse["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["x-kubernetes-validations"] = json!([{"rule": "self.z == 1"}, {"rule": "self.y == 1"}]);
    let causes = crd_causes_since(Some(&bad), &worse);
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert!(causes[0].1.contains("undefined field 'y'"));
}
