use serde_json::json;

use super::*;
use crate::registry::served_for_test as res;

/// field_validation.go's Deployment: an unknown field, then a duplicate, in the body.
const DEPLOYMENT: &str = r#"{"apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "my-dep", "labels": {"app": "nginx"}},
  "spec": {"unknownField": "foo", "replicas": 2, "replicas": 3,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {"metadata": {"labels": {"app": "nginx"}},
      "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}}"#;

fn errors_of(res: &ResourceInfo, format: BodyFormat, body: &str) -> Vec<String> {
    let schemas = Schemas::new();
    let obj = crate::request::decode_body(format, body.as_bytes()).unwrap();
    body_errors(&schemas, res, format, body.as_bytes(), &obj)
}

#[test]
fn a_typed_body_lists_unknown_and_duplicate_fields_in_its_order() {
    let deployments = res("apps", "deployments");
    let errors = errors_of(&deployments, BodyFormat::Json, DEPLOYMENT);
    let e = judge(FieldValidation::Strict, errors.clone()).unwrap_err();
    assert_eq!((e.code, e.reason), (400, "BadRequest"));
    assert_eq!(
        e.message,
        r#"strict decoding error: unknown field "spec.unknownField", duplicate field "spec.replicas""#
    );
    assert_eq!(
        judge(FieldValidation::Warn, errors.clone()).unwrap(),
        vec![
            r#"unknown field "spec.unknownField""#,
            r#"duplicate field "spec.replicas""#
        ]
    );
    assert!(judge(FieldValidation::Ignore, errors).unwrap().is_empty());

    // A duplicate before an unknown field comes first; metadata is checked too.
    let body = r#"{"metadata": {"name": "a", "name": "b", "unknownMeta": 1}, "data": {}}"#;
    assert_eq!(
        errors_of(&res("", "configmaps"), BodyFormat::Json, body),
        vec![
            r#"duplicate field "metadata.name""#,
            r#"unknown field "metadata.unknownMeta""#
        ]
    );
}

#[test]
fn a_yaml_bodys_duplicates_are_one_error_first_and_a_warning_per_line() {
    let body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  bogus: 1\ndata:\n  k: x\n  k: y\n";
    let errors = errors_of(&res("", "configmaps"), BodyFormat::Yaml, body);
    assert_eq!(
        errors,
        vec![
            "yaml: unmarshal errors:\n  line 8: key \"k\" already set in map".to_string(),
            r#"unknown field "metadata.bogus""#.to_string(),
        ]
    );
    assert_eq!(
        judge(FieldValidation::Warn, errors).unwrap(),
        vec![
            r#"line 8: key "k" already set in map"#,
            r#"unknown field "metadata.bogus""#
        ]
    );
}

#[test]
fn a_strict_patch_is_refused_as_an_invalid_patch() {
    let errors = vec![r#"unknown field "spec.foo""#.to_string()];
    let e = judge_patch(FieldValidation::Strict, errors, || "{\"a\":1}".into()).unwrap_err();
    assert_eq!((e.code, e.reason), (422, "Invalid"));
    assert_eq!(
        e.message,
        r#" "" is invalid: patch: Invalid value: "{\"a\":1}": strict decoding error: unknown field "spec.foo""#
    );
    assert_eq!(
        patch_body_errors(BodyFormat::JsonPatch, br#"[{"op":"add","op":"add"}]"#),
        vec![r#"json patch duplicate field "[0].op""#]
    );
}

#[test]
fn go_prints_a_patch_as_a_sorted_map() {
    let v = json!({"spec": {"b": [1, "x"], "a": null}, "metadata": {"n": true}});
    assert_eq!(
        go_print(&v),
        "map[metadata:map[n:true] spec:map[a:<nil> b:[1 x]]]"
    );
}

#[test]
fn an_apply_with_undeclared_fields_is_refused_in_structured_merge_diffs_words() {
    let schemas = Schemas::new();
    let deployments = res("apps", "deployments");
    let patch = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "d", "unknownMeta": 1},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "bogus": 1}]}}}});
    let e = undeclared_error(&schemas, &deployments, Some("ns"), "d", &patch).unwrap_err();
    assert_eq!(e.code, 500);
    assert_eq!(
        e.message,
        "failed to create typed patch object (ns/d; apps/v1, Kind=Deployment): errors:\n  \
         .metadata.unknownMeta: field not declared in schema\n  \
         .spec.template.spec.containers[name=\"c\"].bogus: field not declared in schema"
    );
    let fine = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1}});
    assert!(undeclared_error(&schemas, &deployments, Some("ns"), "d", &fine).is_ok());
}
