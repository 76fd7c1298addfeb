use serde_json::json;

use super::*;
use crate::registry::Registry;

fn event_apis() -> (ResourceInfo, ResourceInfo) {
    let snap = Registry::new().snapshot();
    let core = snap.get("", "v1", "events").map(|r| (**r).clone());
    let new = snap
        .get("events.k8s.io", "v1", "events")
        .map(|r| (**r).clone());
    (
        core.expect("core events"),
        new.expect("events.k8s.io events"),
    )
}

#[test]
fn both_event_apis_share_one_storage_prefix() {
    let (core, new) = event_apis();
    assert_eq!(new.key_prefix(Some("ns")), "/registry/core/events/ns/");
    assert_eq!(new.key(Some("ns"), "e"), core.key(Some("ns"), "e"));
    assert!(converts(&new) && !converts(&core));
}

#[test]
fn events_convert_field_by_field_and_back() {
    let (core, new) = event_apis();
    let served = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "ns"},
        "eventTime": "2024-01-02T03:04:05.000000Z",
        "series": {"count": 2, "lastObservedTime": "2024-01-02T03:04:06.000000Z"},
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
        "action": "Scale", "reason": "Scaled", "type": "Normal",
        "regarding": {"kind": "Deployment", "name": "web", "namespace": "ns"},
        "related": {"kind": "ReplicaSet", "name": "web-1"},
        "note": "scaled up",
        "deprecatedSource": {"component": "ctl", "host": "h"},
        "deprecatedFirstTimestamp": "2024-01-02T03:04:05Z",
        "deprecatedLastTimestamp": "2024-01-02T03:04:06Z",
        "deprecatedCount": 2,
    });
    let stored = to_storage(&new, served.clone());
    assert_eq!(
        stored,
        json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "ns"},
            "eventTime": "2024-01-02T03:04:05.000000Z",
            "series": {"count": 2, "lastObservedTime": "2024-01-02T03:04:06.000000Z"},
            "reportingComponent": "example.com/ctl", "reportingInstance": "ctl-1",
            "action": "Scale", "reason": "Scaled", "type": "Normal",
            "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "ns"},
            "related": {"kind": "ReplicaSet", "name": "web-1"},
            "message": "scaled up",
            "source": {"component": "ctl", "host": "h"},
            "firstTimestamp": "2024-01-02T03:04:05Z",
            "lastTimestamp": "2024-01-02T03:04:06Z",
            "count": 2,
        })
    );
    assert_eq!(from_storage(&new, stored.clone()), served);
    // Idempotent in both directions; core/v1 reads the stored object as it is.
    assert_eq!(to_storage(&new, stored.clone()), stored);
    assert_eq!(from_storage(&new, served.clone()), served);
    assert_eq!(from_storage(&core, stored.clone()), stored);
    assert_eq!(to_storage(&core, stored.clone()), stored);
}
