use serde_json::{json, Value};

use super::*;

fn list(cpu: &str, memory: &str, storage: &str) -> Value {
    let mut m = Map::new();
    for (k, v) in [
        ("cpu", cpu),
        ("memory", memory),
        ("ephemeral-storage", storage),
    ] {
        if !v.is_empty() {
            m.insert(k.into(), json!(v));
        }
    }
    Value::Object(m)
}

/// The upstream spec's LimitRange ("should create a LimitRange with defaults").
fn e2e_item() -> Value {
    defaulted_item(&json!({
        "type": "Container",
        "min": list("50m", "100Mi", "100Gi"),
        "max": list("500m", "500Mi", "500Gi"),
        "default": list("500m", "500Mi", "500Gi"),
        "defaultRequest": list("100m", "200Mi", "200Gi"),
    }))
}

fn pod(requests: Value, limits: Value) -> Value {
    json!({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "i", "resources": {"requests": requests, "limits": limits}}]}})
}

#[test]
fn limit_range_items_get_kube_defaults() {
    let item = defaulted_item(
        &json!({"type": "Container", "max": {"cpu": "1"}, "min": {"memory": "1Mi"}}),
    );
    assert_eq!(item["default"], json!({"cpu": "1"}));
    assert_eq!(item["defaultRequest"], json!({"cpu": "1", "memory": "1Mi"}));
    let pod_item = json!({"type": "Pod", "max": {"cpu": "1"}});
    assert_eq!(defaulted_item(&pod_item), pod_item);
}

#[test]
fn defaults_land_in_containers_as_the_upstream_spec_expects() {
    let items = [e2e_item()];
    // (requests given, limits given, requests after, limits after)
    let cases = [
        (
            json!({}),
            json!({}),
            list("100m", "200Mi", "200Gi"),
            list("500m", "500Mi", "500Gi"),
        ),
        (
            list("", "150Mi", "150Gi"),
            list("300m", "", ""),
            list("300m", "150Mi", "150Gi"),
            list("300m", "500Mi", "500Gi"),
        ),
    ];
    for (requests, limits, want_requests, want_limits) in cases {
        let mut p = pod(requests, limits);
        apply_defaults(&items, &mut p);
        let r = &p["spec"]["containers"][0]["resources"];
        assert_eq!(r["requests"], want_requests);
        assert_eq!(r["limits"], want_limits);
        let note = p["metadata"]["annotations"][ANNOTATION]
            .as_str()
            .unwrap_or("");
        assert!(note.starts_with("LimitRanger plugin set: "), "{note}");
        assert!(check_pod(&items, &p).is_empty(), "{p}");
    }
    let mut p = pod(json!({}), json!({}));
    apply_defaults(&items, &mut p);
    assert_eq!(
        p["metadata"]["annotations"][ANNOTATION],
        "LimitRanger plugin set: cpu, ephemeral-storage, memory request for container c; \
         cpu, ephemeral-storage, memory limit for container c"
    );
}

#[test]
fn min_max_and_ratio_refused_in_kube_words() {
    let items = [e2e_item()];
    let mut small = pod(list("10m", "50Mi", "50Gi"), json!({}));
    apply_defaults(&items, &mut small);
    assert_eq!(
        check_pod(&items, &small),
        [
            "minimum cpu usage per Container is 50m, but request is 10m",
            "minimum ephemeral-storage usage per Container is 100Gi, but request is 50Gi",
            "minimum memory usage per Container is 100Mi, but request is 50Mi",
        ]
    );
    let mut big = pod(list("600m", "600Mi", "600Gi"), json!({}));
    apply_defaults(&items, &mut big);
    assert_eq!(
        check_pod(&items, &big),
        [
            "maximum cpu usage per Container is 500m, but request is 600m",
            "maximum ephemeral-storage usage per Container is 500Gi, but request is 600Gi",
            "maximum memory usage per Container is 500Mi, but request is 600Mi",
        ]
    );
    let ratio = [json!({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}})];
    let ok = pod(json!({"cpu": "1"}), json!({"cpu": "2"}));
    assert!(check_pod(&ratio, &ok).is_empty());
    let over = pod(json!({"cpu": "1"}), json!({"cpu": "3"}));
    assert_eq!(
        check_pod(&ratio, &over),
        ["cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000"]
    );
    let pod_max = [json!({"type": "Pod", "max": {"cpu": "1"}})];
    let two = json!({"spec": {"containers": [
        {"name": "a", "resources": {"limits": {"cpu": "600m"}}},
        {"name": "b", "resources": {"limits": {"cpu": "600m"}}}]}});
    assert_eq!(
        check_pod(&pod_max, &two),
        ["maximum cpu usage per Pod is 1, but limit is 1200m"]
    );
}

#[test]
fn claims_bounded_by_their_request() {
    let items = [
        json!({"type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "2Gi"}}),
    ];
    let claim = |s: &str| json!({"spec": {"resources": {"requests": {"storage": s}}}});
    assert!(check_claim(&items, &claim("1Gi")).is_empty());
    assert_eq!(
        check_claim(&items, &claim("3Gi")),
        ["maximum storage usage per PersistentVolumeClaim is 2Gi, but request is 3Gi"]
    );
    assert_eq!(
        check_claim(&items, &claim("500Mi")),
        ["minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi"]
    );
}
