use std::collections::BTreeSet;

use flotilla_apis::multicluster::{
    ServiceExport, MANAGED_BY, SERVICE_NAMESPACE_LABEL, SERVICE_NAME_LABEL, SOURCE_CLUSTER_LABEL,
};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::json;

use super::mirror::{copy_name, desired, requested, CONTENT_HASH_ANNOTATION};

fn slice(ns: &str, name: &str, labels: serde_json::Value, ip: &str) -> EndpointSlice {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [ip], "conditions": {"ready": true},
                       "nodeName": "n1", "targetRef": {"kind": "Pod", "name": "p"}}],
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
    }))
    .unwrap()
}

fn request(ns: &str, name: &str) -> ServiceExport {
    serde_json::from_value(json!({
        "metadata": {"name": format!("{ns}.{name}"), "namespace": "flotilla-es-a",
                     "labels": {SERVICE_NAMESPACE_LABEL: ns, SERVICE_NAME_LABEL: name}},
        "spec": {},
    }))
    .unwrap()
}

#[test]
fn mirrors_only_requested_local_slices() {
    let asked = requested([&request("shop", "web")]);
    assert_eq!(asked, BTreeSet::from([("shop".into(), "web".into())]));
    let slices = [
        slice(
            "shop",
            "web-abc",
            json!({"kubernetes.io/service-name": "web"}),
            "10.0.0.1",
        ),
        // Another Service, another namespace of the same name: not asked for.
        slice(
            "shop",
            "db-abc",
            json!({"kubernetes.io/service-name": "db"}),
            "10.0.0.2",
        ),
        slice(
            "other",
            "web-x",
            json!({"kubernetes.io/service-name": "web"}),
            "10.0.0.3",
        ),
        // A copy delivered from the cluster set: never exported back.
        slice(
            "shop",
            "b.web-def",
            json!({"kubernetes.io/service-name": "web", SOURCE_CLUSTER_LABEL: "b"}),
            "10.1.0.1",
        ),
    ];
    let wanted = desired("a", "flotilla-es-a", &asked, slices.iter());
    assert_eq!(wanted.keys().collect::<Vec<_>>(), ["shop.web-abc"]);
    let body = &wanted["shop.web-abc"];
    assert_eq!(body["metadata"]["namespace"], "flotilla-es-a");
    let labels = &body["metadata"]["labels"];
    assert_eq!(labels[SOURCE_CLUSTER_LABEL], "a");
    assert_eq!(labels[SERVICE_NAME_LABEL], "web");
    assert_eq!(labels[SERVICE_NAMESPACE_LABEL], "shop");
    assert_eq!(labels["endpointslice.kubernetes.io/managed-by"], MANAGED_BY);
    assert!(labels.get("kubernetes.io/service-name").is_none());
    // The member's node and pod mean nothing elsewhere.
    assert_eq!(
        body["endpoints"],
        json!([{"addresses": ["10.0.0.1"], "conditions": {"ready": true}}])
    );
    assert_eq!(body["ports"][0]["port"], 8080);
}

#[test]
fn content_hash_follows_content() {
    let asked = requested([&request("shop", "web")]);
    let one = [slice(
        "shop",
        "web-abc",
        json!({"kubernetes.io/service-name": "web"}),
        "10.0.0.1",
    )];
    let two = [slice(
        "shop",
        "web-abc",
        json!({"kubernetes.io/service-name": "web"}),
        "10.0.0.9",
    )];
    let hash = |s: &[EndpointSlice]| {
        desired("a", "flotilla-es-a", &asked, s.iter())["shop.web-abc"]["metadata"]["annotations"]
            [CONTENT_HASH_ANNOTATION]
            .clone()
    };
    assert_eq!(hash(&one), hash(&one.clone()));
    assert_ne!(hash(&one), hash(&two));
}

#[test]
fn long_names_are_cut_with_a_hash() {
    let long = "x".repeat(250);
    let a = copy_name("shop", &long);
    let b = copy_name("shoq", &long);
    assert_eq!(a.len(), 253);
    assert_ne!(a, b);
    assert_eq!(copy_name("shop", "web-abc"), "shop.web-abc");
}
