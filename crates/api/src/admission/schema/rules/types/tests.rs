//! Schema nodes as CEL sees them.

use serde_json::json;

use super::*;

#[test]
fn escaped_names() {
    for (name, want) in [
        ("foo", Some("foo")),
        ("foo-bar", Some("foo__dash__bar")),
        ("a.b/c", Some("a__dot__b__slash__c")),
        ("a__b", Some("a__underscores__b")),
        ("namespace", Some("__namespace__")),
        ("1x", None),
        ("a b", None),
    ] {
        assert_eq!(escape(name).as_deref(), want, "{name}");
    }
}

#[test]
fn shapes_and_sizes_of_schemas() {
    let s = json!({"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string", "maxLength": 10},
        "l": {"type": "array", "items": {"type": "integer"}},
        "m": {"type": "object", "maxProperties": 3, "additionalProperties": {"type": "boolean"}}}});
    assert_eq!(min_size(&s), 2 + 1 + 2 + 4);
    let Shape::Object(f) = shape_of(&s, false) else {
        panic!("an object")
    };
    assert_eq!(f["a"], Shape::String(40));
    assert_eq!(
        f["l"],
        Shape::List(Box::new(Shape::Scalar), (MAX_REQUEST_BYTES - 2) / 2)
    );
    assert_eq!(f["m"], Shape::Map(Box::new(Shape::Scalar), 3));
    assert!(!f.contains_key("kind"));
    let Shape::Object(root) = shape_of(&s, true) else {
        panic!("an object")
    };
    assert!(root.contains_key("kind") && root.contains_key("metadata"));
}

#[test]
fn types_of_schemas() {
    let s = json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "tags": {"type": "object", "additionalProperties": {"type": "string"}}}});
    let fields = SchemaFields { root: &s };
    let root = type_of(&s, "", true);
    let Type::Object(name) = &root else {
        panic!("an object")
    };
    let Some(Type::Object(spec)) = fields.field(name, "spec") else {
        panic!("spec is an object")
    };
    assert_eq!(fields.field(&spec, "n"), Some(Type::Int));
    assert_eq!(fields.field(&spec, "z"), None);
    assert_eq!(fields.field(name, "free"), Some(Type::Dyn));
    assert_eq!(
        fields.field(name, "tags"),
        Some(Type::Map(Box::new(Type::String)))
    );
    assert_eq!(fields.field(name, "kind"), Some(Type::String));
    let Some(Type::Object(meta)) = fields.field(name, "metadata") else {
        panic!("metadata")
    };
    assert_eq!(fields.field(&meta, "name"), Some(Type::String));
}
