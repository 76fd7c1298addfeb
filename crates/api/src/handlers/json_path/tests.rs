use serde_json::json;

use super::*;

#[test]
fn json_path_handles_what_crds_use() {
    let o = json!({"spec": {"a": [{"b": 1}, {"b": 2}]}, "status": {"conditions": [
        {"type": "Applied", "status": "False", "n": 1},
        {"type": "Ready", "status": "True", "n": 2}]}});
    let cases: &[(&str, Vec<Value>)] = &[
        (".spec.a[*].b", vec![json!(1), json!(2)]),
        (".spec.a[1].b", vec![json!(2)]),
        ("{.spec.a[0].b}", vec![json!(1)]),
        (".status.conditions[0].status", vec![json!("False")]),
        (
            r#".status.conditions[?(@.type=="Ready")].status"#,
            vec![json!("True")],
        ),
        (
            ".status.conditions[?(@.type=='Applied')].status",
            vec![json!("False")],
        ),
        (
            r#".status.conditions[?(@.type!="Ready")].type"#,
            vec![json!("Applied")],
        ),
        (".status.conditions[?(@.n==2)].type", vec![json!("Ready")]),
        (
            ".status.conditions[?(@.status)].n",
            vec![json!(1), json!(2)],
        ),
        (r#".status.conditions[?(@.type=="Gone")].status"#, vec![]),
        (".spec.missing", vec![]),
    ];
    for (path, want) in cases {
        assert_eq!(&json_path(&o, path), want, "{path}");
    }
}
