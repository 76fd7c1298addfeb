//! Custom resources served as stored when they are at the version asked for, converted
//! otherwise.

use bytes::Bytes;
use serde_json::{json, Value};

use super::output_raw;

#[test]
fn custom_resources_are_served_at_the_version_asked_for() {
    let crd = json!({"spec": {"group": "stable.example.com",
        "names": {"kind": "CronTab", "plural": "crontabs"}, "scope": "Namespaced",
        "versions": [{"name": "v1", "served": true, "storage": true},
                     {"name": "v2", "served": true, "storage": false}]}});
    let served = crate::registry::crd::resources_for(&crd);
    let at = |v: &str| {
        served
            .iter()
            .find(|r| r.version == v)
            .unwrap_or_else(|| panic!("{v} served"))
    };
    // Keys in an order a parse and a write would not keep: as stored means byte for byte.
    let stored = Bytes::from_static(
        br#"{"spec":{"z":1,"a":2},"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x"}}"#,
    );
    assert_eq!(output_raw(at("v1"), &stored), stored);
    let v2: Value = serde_json::from_slice(&output_raw(at("v2"), &stored)).expect("JSON");
    assert_eq!(v2["apiVersion"], "stable.example.com/v2");
    assert_eq!(v2["spec"], json!({"z": 1, "a": 2}));
    // No apiVersion, or not JSON: not served as stored.
    let bare = Bytes::from_static(br#"{"kind":"CronTab"}"#);
    let v1: Value = serde_json::from_slice(&output_raw(at("v1"), &bare)).expect("JSON");
    assert_eq!(v1["apiVersion"], "stable.example.com/v1");
}

#[test]
fn objects_their_read_defaults_do_not_change_are_served_as_stored() {
    use crate::cache::CachedObject;
    let crd = |default: &str| {
        json!({"spec": {"group": "stable.example.com",
            "names": {"kind": "CronTab", "plural": "crontabs"}, "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "mode": {"type": "string", "default": default}}}}}}}]}})
    };
    let res = crate::registry::crd::resources_for(&crd("Pull")).remove(0);
    assert!(res.read_defaults.is_some(), "the schema declares a default");
    let object = |raw: &'static [u8]| {
        CachedObject::new("k".into(), Bytes::from_static(raw), 1).expect("an object")
    };
    // Written with its default: the stored bytes, key order and all.
    let defaulted = object(
        br#"{"spec":{"mode":"Pull","z":1},"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"x"}}"#,
    );
    assert_eq!(super::output(&res, &defaulted), defaulted.raw());
    assert_eq!(
        super::output(&res, &defaulted),
        defaulted.raw(),
        "asked again"
    );
    // Stored before the default existed: served with it, every time.
    let bare = object(
        br#"{"spec":{"z":1},"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"y"}}"#,
    );
    for _ in 0..2 {
        let v: Value = serde_json::from_slice(&super::output(&res, &bare)).expect("JSON");
        assert_eq!(v["spec"], json!({"z": 1, "mode": "Pull"}));
    }
    // The served resources rebuilt (another CRD changed): the same defaults in a new copy
    // are not asked about again.
    let rebuilt = crate::registry::crd::resources_for(&crd("Pull")).remove(0);
    let defaults = rebuilt.read_defaults.as_ref().expect("defaults");
    assert!(!std::sync::Arc::ptr_eq(
        defaults,
        res.read_defaults.as_ref().expect("defaults")
    ));
    assert!(bare.changed_by_defaults(defaults, || panic!("asked again")));
    assert!(!defaulted.changed_by_defaults(defaults, || panic!("asked again")));
    // The CRD's default changed: the first object is asked anew and gets nothing new (its
    // value is set), the answer is not the old schema's.
    let push = crate::registry::crd::resources_for(&crd("Push")).remove(0);
    assert_eq!(super::output(&push, &defaulted), defaulted.raw());
    let v: Value = serde_json::from_slice(&super::output(&push, &bare)).expect("JSON");
    assert_eq!(v["spec"]["mode"], "Push");
}

#[test]
fn the_metadata_view_is_the_stored_metadata_and_nothing_else() {
    let stored = Bytes::from_static(
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"default","labels":{"a":"1"},"resourceVersion":"7"},"data":{"big":"ignored"}}"#,
    );
    let o = crate::cache::CachedObject::new("/registry/configmaps/default/x".into(), stored, 7)
        .expect("a cached object");
    let view: Value = serde_json::from_slice(&super::partial_metadata(&o)).expect("JSON");
    assert_eq!(
        view,
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": {"name": "x", "namespace": "default", "labels": {"a": "1"},
                         "resourceVersion": "7"}})
    );
}
