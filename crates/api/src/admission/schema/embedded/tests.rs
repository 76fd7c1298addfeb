//! (embedded object, expected causes at `spec.t`).

use serde_json::{json, Value};

use super::*;

#[test]
fn embedded_resources() {
    let cases: &[(Value, Vec<(&str, String)>)] = &[
        (
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x"}}),
            vec![],
        ),
        (
            json!({"metadata": {}}),
            vec![
                (
                    "spec.t.apiVersion",
                    "Required value: must not be empty".into(),
                ),
                ("spec.t.kind", "Required value: must not be empty".into()),
            ],
        ),
        (
            json!({"apiVersion": "a/b/c", "kind": "", "metadata": {"name": "a/b"}}),
            vec![
                (
                    "spec.t.apiVersion",
                    r#"Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#.into(),
                ),
                (
                    "spec.t.kind",
                    r#"Invalid value: "": must not be empty"#.into(),
                ),
                (
                    "spec.t.metadata.name",
                    r#"Invalid value: "a/b": may not contain '/'"#.into(),
                ),
            ],
        ),
        (
            json!({"apiVersion": "v1", "kind": "Bad_Kind"}),
            vec![(
                "spec.t.kind",
                format!(
                    r#"Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: {DNS1035}"#
                ),
            )],
        ),
        (
            json!({"apiVersion": 1, "kind": "ConfigMap"}),
            vec![(
                "spec.t.apiVersion",
                "Invalid value: 1: must be a string".into(),
            )],
        ),
    ];
    for (obj, want) in cases {
        let mut causes = Vec::new();
        check(obj.as_object().unwrap(), "spec.t", &mut causes);
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(f, m)| (f.to_string(), m.clone()))
            .collect();
        assert_eq!(causes, want, "{obj}");
    }
}
