//! JSON patch bounds: operation count, bytes added by `copy`, depth of what is placed.

use serde_json::{json, Value};

use super::super::{json_patch, PatchError};
use crate::limits::{MAX_DEPTH, MAX_JSON_PATCH_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS};

/// `{"d": {"d": … "leaf"}}`, `n` objects deep.
fn nested(n: usize) -> Value {
    (0..n).fold(json!("leaf"), |v, _| json!({ "d": v }))
}

fn unprocessable(doc: &Value, patch: &Value) -> String {
    match json_patch(doc, patch) {
        Err(PatchError::Unprocessable(m)) => m,
        other => panic!("want Unprocessable, got {other:?}"),
    }
}

#[test]
fn operations_are_counted_before_any_applies() {
    let doc = json!({"a": 1});
    let test = json!({"op": "test", "path": "/a", "value": 1});
    let at_limit = Value::Array(vec![test.clone(); MAX_JSON_PATCH_OPERATIONS]);
    assert_eq!(json_patch(&doc, &at_limit), Ok(doc.clone()));
    let over = Value::Array(vec![test; MAX_JSON_PATCH_OPERATIONS + 1]);
    assert_eq!(
        json_patch(&doc, &over),
        Err(PatchError::TooLarge(
            "The allowed maximum operations in a JSON patch is 10000, got 10001".into()
        ))
    );
}

#[test]
fn copying_a_value_into_itself_stops_at_the_copy_limit() {
    let doc = json!({"x": {"a": "hello"}});
    // Each copy of /x into a new member of itself doubles it: forty would be 2^40 times it.
    let copies = |n: usize| -> Value {
        (0..n)
            .map(|i| json!({"op": "copy", "from": "/x", "path": format!("/x/y{i}")}))
            .collect()
    };
    let two = json_patch(&doc, &copies(2)).unwrap();
    assert_eq!(two["x"]["y1"]["y0"], json!({"a": "hello"}));
    let message = unprocessable(&doc, &copies(40));
    assert!(
        message.contains("copies of this patch would add more than"),
        "{message}"
    );
    // Large copies count in bytes, whatever their number.
    let big = json!({"x": "z".repeat(MAX_JSON_PATCH_COPY_BYTES / 2)});
    let copies = json!([
        {"op": "copy", "from": "/x", "path": "/y"},
        {"op": "copy", "from": "/x", "path": "/z"},
    ]);
    assert!(unprocessable(&big, &copies).contains("operation 1"));
}

#[test]
fn nothing_is_placed_deeper_than_the_hub_reads_back() {
    // /a holds MAX_DEPTH - 1 levels: the document is exactly MAX_DEPTH deep.
    let doc = json!({ "a": nested(MAX_DEPTH - 1) });
    let leaf = format!("/a{}", "/d".repeat(MAX_DEPTH - 2));
    for (name, patch) in [
        (
            "add",
            json!([{"op": "add", "path": format!("{leaf}/d"), "value": {}}]),
        ),
        (
            "replace",
            json!([{"op": "replace", "path": leaf, "value": {"e": {}}}]),
        ),
        (
            "copy",
            json!([{"op": "copy", "from": "/a", "path": format!("{leaf}/e")}]),
        ),
        (
            "move",
            json!([
                {"op": "add", "path": "/b", "value": {"c": {}}},
                {"op": "move", "from": "/b", "path": format!("{leaf}/e")},
            ]),
        ),
    ] {
        let message = unprocessable(&doc, &patch);
        assert!(
            message.contains("nested more than 127 levels"),
            "{name}: {message}"
        );
    }
    // Scalars fit anywhere a container is, and moving a value up never deepens anything.
    let patch = json!([
        {"op": "add", "path": format!("{leaf}/d"), "value": "scalar"},
        {"op": "move", "from": "/a/d", "path": "/b"},
    ]);
    let out = json_patch(&doc, &patch).unwrap();
    assert!(out["b"].is_object());
}
