//! Objects stored before a default was added get it when read.

use serde_json::json;

use super::*;
use crate::registry::crd::resources_for;

fn crd(schema: serde_json::Value) -> serde_json::Value {
    json!({"spec": {"group": "example.com", "scope": "Cluster",
        "names": {"kind": "Foo", "plural": "foos"},
        "versions": [{"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": schema}}]}})
}

#[test]
fn stored_objects_get_the_schemas_defaults() {
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "string", "default": "A"},
        "b": {"type": "string"},
        "spec": {"type": "object", "properties": {"n": {"type": "integer", "default": 3}}},
    }});
    let res = &resources_for(&crd(schema))[0];
    let mut stored = json!({"apiVersion": "example.com/v1", "kind": "Foo",
        "metadata": {"name": "x"}, "b": "kept", "spec": {}});
    apply(res, &mut stored);
    assert_eq!(stored["a"], "A");
    assert_eq!(stored["b"], "kept");
    assert_eq!(stored["spec"]["n"], 3);
    // A value that is there is not replaced.
    let mut set = json!({"a": "mine"});
    apply(res, &mut set);
    assert_eq!(set["a"], "mine");
}

#[test]
fn schemas_without_defaults_leave_reads_alone() {
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}});
    assert!(resources_for(&crd(schema))[0].read_defaults.is_none());
    let nested = json!({"type": "object", "properties": {"l": {"type": "array",
        "items": {"type": "object", "properties": {"x": {"type": "string", "default": "d"}}}}}});
    assert!(resources_for(&crd(nested))[0].read_defaults.is_some());
}
