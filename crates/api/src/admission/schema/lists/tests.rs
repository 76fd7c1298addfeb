//! (schema, list, expected causes) for each list type.

use serde_json::{json, Value};

use super::*;

/// (schema, list, expected (field, message) causes).
type Case = (Value, Value, Vec<(&'static str, &'static str)>);

#[test]
fn list_types() {
    let cases: &[Case] = &[
        (
            json!({"x-kubernetes-list-type": "set"}),
            json!(["a", "b"]),
            vec![],
        ),
        (
            json!({"x-kubernetes-list-type": "set"}),
            json!(["a", "b", "a", 1, 1]),
            vec![
                ("spec.x[2]", r#"Duplicate value: "a""#),
                ("spec.x[4]", "Duplicate value: 1"),
            ],
        ),
        (
            json!({"x-kubernetes-list-type": "atomic"}),
            json!(["a", "a"]),
            vec![],
        ),
        (
            json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}),
            json!([{"name": "a", "v": 1}, {"name": "b"}, {"name": "a", "v": 2}]),
            vec![(
                "spec.x[2]",
                r#"Duplicate value: map[string]interface {}{"name":"a"}"#,
            )],
        ),
        (
            json!({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"]}),
            json!([{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}, {"protocol": "TCP", "port": 80}]),
            vec![(
                "spec.x[2]",
                r#"Duplicate value: map[string]interface {}{"port":80, "protocol":"TCP"}"#,
            )],
        ),
    ];
    for (schema, list, want) in cases {
        let mut causes = Vec::new();
        let s = schema.as_object().cloned().unwrap_or_default();
        check(
            &s,
            list.as_array().map_or(&[][..], Vec::as_slice),
            "spec.x",
            &mut causes,
        );
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(f, m)| (f.to_string(), m.to_string()))
            .collect();
        assert_eq!(causes, want, "{schema} with {list}");
    }
}
