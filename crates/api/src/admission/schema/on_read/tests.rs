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

#[test]
fn defaults_follow_kube_apiservers_reading_rules() {
    let schema = json!({"type": "object", "properties": {
        "spec": {"type": "object", "default": {}, "properties": {
            "mode": {"type": "string", "default": "Pull"},
            "opt": {"type": "string", "nullable": true, "default": "x"},
            "plain": {"type": "string"},
            "ports": {"type": "array", "items": {"type": "object", "properties": {
                "proto": {"type": "string", "default": "TCP"}}}},
            "byName": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"w": {"type": "integer", "default": 1}}}},
        }},
    }});
    let d = ReadDefaults::compile(&schema).expect("defaults");
    // A default inserted is defaulted in turn.
    let mut v = json!({});
    assert!(d.changes(&v));
    assert!(d.apply(&mut v));
    assert_eq!(v, json!({"spec": {"mode": "Pull", "opt": "x"}}));
    assert!(!d.changes(&v) && !d.apply(&mut v.clone()), "a fixed point");
    // A null where null is not allowed takes the default; a nullable null stays; a null
    // without a default is left as read (kube-apiserver prunes those on write, not on read).
    let mut v = json!({"spec": {"mode": null, "opt": null, "plain": null}});
    assert!(d.apply(&mut v));
    assert_eq!(
        v["spec"],
        json!({"mode": "Pull", "opt": null, "plain": null})
    );
    // Lists' items and maps' values.
    let mut v = json!({"spec": {"mode": "Push", "opt": "y",
        "ports": [{"proto": "UDP"}, {}], "byName": {"a": {}, "b": {"w": 5}}}});
    assert!(d.changes(&v));
    assert!(d.apply(&mut v));
    assert_eq!(
        v["spec"]["ports"],
        json!([{"proto": "UDP"}, {"proto": "TCP"}])
    );
    assert_eq!(v["spec"]["byName"], json!({"a": {"w": 1}, "b": {"w": 5}}));
    assert!(!d.changes(&v));
    // Values of another type than the schema's are left alone.
    let mut odd = json!({"spec": {"mode": "Pull", "opt": "y", "ports": "none", "byName": 3}});
    assert!(!d.changes(&odd) && !d.apply(&mut odd));
}
