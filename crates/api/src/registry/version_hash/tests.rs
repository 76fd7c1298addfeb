//! The hashes kube-apiserver v1.32 shows in discovery, for built-ins and custom resources.

use serde_json::json;

use super::*;
use crate::registry::Registry;

#[test]
fn hashes_as_kube_apiserver() {
    // Values read from a kube-apiserver's discovery.
    let cases = [
        ("", "v1", "Pod", "xPOwRZ+Yhw8="),
        ("", "v1", "ConfigMap", "qFsyl6wFWjQ="),
        ("", "v1", "Namespace", "Q3oi5N2YM8M="),
        ("apps", "v1", "Deployment", "8aSe+NMegvE="),
    ];
    for (g, v, k, want) in cases {
        assert_eq!(hash(g, v, k), want, "{g}/{v}/{k}");
    }
}

#[test]
fn built_ins_and_shared_storage() {
    let snap = Registry::new().snapshot();
    let find = |g: &str, p: &str| {
        snap.all()
            .find(|r| r.group == g && r.plural == p)
            .unwrap_or_else(|| panic!("{g}/{p} served"))
            .clone()
    };
    let none = |_: &str| None;
    assert_eq!(
        for_resource(&snap, &find("", "configmaps"), none).as_deref(),
        Some("qFsyl6wFWjQ=")
    );
    // events.k8s.io Events are stored as core Events.
    assert_eq!(
        for_resource(&snap, &find("events.k8s.io", "events"), none),
        Some(hash("", "v1", "Event"))
    );
}

#[test]
fn custom_resources_use_the_storage_version() {
    let crd = json!({"spec": {"group": "stable.example.com", "names": {"kind": "CronTab", "plural": "crontabs"},
    "scope": "Namespaced", "versions": [
        {"name": "v2", "served": true, "storage": false},
        {"name": "v1", "served": true, "storage": true},
    ]}});
    let snap = Registry::new().snapshot();
    let served = crate::registry::crd::resources_for(&crd);
    let by_name = |n: &str| (n == "crontabs.stable.example.com").then(|| crd.clone());
    for r in &served {
        assert_eq!(
            for_resource(&snap, r, by_name),
            Some(hash("stable.example.com", "v1", "CronTab")),
            "{}",
            r.version
        );
    }
    assert_eq!(for_resource(&snap, &served[0], |_: &str| None), None);
}
