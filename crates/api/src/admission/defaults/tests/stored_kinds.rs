//! The kinds stored without being run (issue 21, part A): what kube-apiserver 1.32 returns for
//! minimal objects.

use serde_json::json;

use super::{defaulted, on_create, pod_spec, res, template};

#[test]
fn a_new_pod_gets_pod_defaults_and_a_pending_status() {
    let mut pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    on_create(&res("", "v1", "pods"), &mut pod);
    let mut spec = pod_spec("nginx", "Always");
    spec["enableServiceLinks"] = json!(true);
    spec["serviceAccountName"] = json!("default");
    spec["serviceAccount"] = json!("default");
    assert_eq!(pod["spec"], spec);
    assert_eq!(
        pod["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
}

#[test]
fn pod_requests_default_to_limits_and_set_the_qos_class() {
    let limits = json!({"cpu": "1", "memory": "1Gi"});
    let mut pod = json!({"spec": {"containers": [
        {"name": "c", "image": "nginx:1", "resources": {"limits": limits}},
    ]}});
    on_create(&res("", "v1", "pods"), &mut pod);
    assert_eq!(
        pod["spec"]["containers"][0]["resources"]["requests"],
        limits
    );
    assert_eq!(pod["status"]["qosClass"], "Guaranteed");
    let mut burst = json!({"spec": {"containers": [
        {"name": "c", "image": "nginx:1", "resources": {"requests": {"cpu": "100m"}}},
    ]}});
    on_create(&res("", "v1", "pods"), &mut burst);
    assert_eq!(burst["status"]["qosClass"], "Burstable");
}

#[test]
fn replication_controllers_take_selector_and_labels_from_the_template() {
    let rc = defaulted(
        "",
        "v1",
        "replicationcontrollers",
        json!({"metadata": {"name": "r"}, "spec": {"template": template("nginx:1")}}),
    );
    assert_eq!(rc["spec"]["selector"], json!({"app": "web"}));
    assert_eq!(rc["metadata"]["labels"], json!({"app": "web"}));
    assert_eq!(rc["spec"]["replicas"], 1);
    assert_eq!(
        rc["spec"]["template"]["spec"],
        pod_spec("nginx:1", "IfNotPresent")
    );
}

#[test]
fn pod_templates_get_pod_spec_defaults() {
    let pt = defaulted(
        "",
        "v1",
        "podtemplates",
        json!({"template": template("nginx:1")}),
    );
    assert_eq!(pt["template"]["spec"], pod_spec("nginx:1", "IfNotPresent"));
}

#[test]
fn limit_range_container_defaults_follow_max_then_min() {
    let lr = defaulted(
        "",
        "v1",
        "limitranges",
        json!({"spec": {"limits": [
            {"type": "Container", "max": {"cpu": "500m"}, "min": {"memory": "100Mi"}},
            {"type": "Pod", "max": {"cpu": "2"}},
        ]}}),
    );
    let c = &lr["spec"]["limits"][0];
    assert_eq!(c["default"], json!({"cpu": "500m"}));
    assert_eq!(
        c["defaultRequest"],
        json!({"cpu": "500m", "memory": "100Mi"})
    );
    assert!(lr["spec"]["limits"][1].get("default").is_none());
}

#[test]
fn small_kinds_get_their_defaults() {
    let cases = [
        (
            ("", "persistentvolumes"),
            json!({"spec": {"capacity": {"storage": "1Gi"}}}),
            json!({"spec": {"capacity": {"storage": "1Gi"}, "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"}}),
        ),
        (
            ("discovery.k8s.io", "endpointslices"),
            json!({"addressType": "IPv4", "ports": [{"port": 80}]}),
            json!({"addressType": "IPv4", "ports": [{"port": 80, "name": "", "protocol": "TCP"}]}),
        ),
        (
            ("scheduling.k8s.io", "priorityclasses"),
            json!({"value": 5}),
            json!({"value": 5, "preemptionPolicy": "PreemptLowerPriority"}),
        ),
        (
            ("storage.k8s.io", "storageclasses"),
            json!({"provisioner": "p"}),
            json!({"provisioner": "p", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"}),
        ),
        (
            ("networking.k8s.io", "ingressclasses"),
            json!({"spec": {"parameters": {"kind": "K", "name": "n"}}}),
            json!({"spec": {"parameters": {"kind": "K", "name": "n", "scope": "Cluster"}}}),
        ),
        (
            ("storage.k8s.io", "csidrivers"),
            json!({"spec": {}}),
            json!({"spec": {
                "attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                "requiresRepublish": false, "seLinuxMount": false,
            }}),
        ),
    ];
    for ((group, plural), obj, want) in cases {
        assert_eq!(defaulted(group, "v1", plural, obj), want, "{plural}");
    }
}
