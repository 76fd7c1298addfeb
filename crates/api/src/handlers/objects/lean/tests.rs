use bytes::Bytes;
use serde_json::{json, Value};

use super::without_managed_fields;

fn cut(text: &str) -> Value {
    let out = without_managed_fields(Bytes::from(text.to_owned()));
    serde_json::from_slice(&out)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out)))
}

fn managed() -> Value {
    json!([{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:data": {"f:k": {}}},
            "time": "2026-01-01T00:00:00Z"}])
}

#[test]
fn the_managed_fields_are_cut_wherever_they_are_in_the_metadata() {
    let data = json!({"k": "v, \"}{[", "n": [1, {"managedFields": 2}]});
    let cases = [
        json!({"name": "a", "managedFields": managed(), "uid": "u"}),
        json!({"managedFields": managed(), "name": "a", "uid": "u"}),
        json!({"name": "a", "uid": "u", "managedFields": managed()}),
        json!({"managedFields": managed()}),
    ];
    for meta in cases {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data});
        let mut want = obj.clone();
        want["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("managedFields");
        assert_eq!(cut(&obj.to_string()), want, "compact: {obj}");
        let pretty = serde_json::to_string_pretty(&obj).unwrap();
        assert_eq!(cut(&pretty), want, "pretty: {pretty}");
    }
}

#[test]
fn an_object_without_managed_fields_is_sent_as_it_is() {
    for text in [
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"managedFields":"x"}}"#,
        r#"{"kind":"ConfigMap","metadata":{}}"#,
        r#"{"kind":"ConfigMap"}"#,
        r#"{}"#,
        r#"[1,2]"#,
        r#"{"metadata":{"name":"a","#,
        r#"not json"#,
        "",
    ] {
        let out = without_managed_fields(Bytes::from(text));
        assert_eq!(out, text.as_bytes(), "{text}");
    }
}

#[test]
fn keys_are_matched_whole_and_unescaped() {
    // An escaped key is not the field (a server never writes one), and a key that only
    // starts like it is another field.
    let text = r#"{"metadata":{"managedFieldsX":[1],"managed\u0046ields":[2]},"spec":{}}"#;
    assert_eq!(without_managed_fields(Bytes::from(text)), text.as_bytes());
}
