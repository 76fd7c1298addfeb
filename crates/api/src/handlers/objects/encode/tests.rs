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
