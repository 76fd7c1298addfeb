use serde_json::json;

use super::*;

#[test]
fn strips_per_kind() {
    let cases = [
        (
            "metadata and status",
            json!({"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n",
                "uid": "u", "resourceVersion": "7", "generation": 2, "creationTimestamp": "t",
                "managedFields": [], "ownerReferences": [{}], "selfLink": "/x",
                "finalizers": ["f"], "deletionTimestamp": "t", "deletionGracePeriodSeconds": 0,
                "labels": {"a": "b"},
                "annotations": {LAST_APPLIED: "{}"}}, "data": {"k": "v"}, "status": {}}),
            json!({"kind": "ConfigMap", "metadata": {"name": "c", "namespace": "n",
                "labels": {"a": "b"}}, "data": {"k": "v"}}),
        ),
        (
            "other annotations stay",
            json!({"kind": "ConfigMap", "metadata": {"annotations": {LAST_APPLIED: "{}", "x": "y"}}}),
            json!({"kind": "ConfigMap", "metadata": {"annotations": {"x": "y"}}}),
        ),
        (
            "service: allocated fields go",
            json!({"kind": "Service", "spec": {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"],
                "healthCheckNodePort": 31000, "type": "LoadBalancer",
                "ports": [{"port": 80, "nodePort": 30080}]}}),
            json!({"kind": "Service", "spec": {"type": "LoadBalancer", "ports": [{"port": 80}]}}),
        ),
        (
            "service: headless stays headless",
            json!({"kind": "Service", "spec": {"clusterIP": "None", "clusterIPs": ["None"]}}),
            json!({"kind": "Service", "spec": {"clusterIP": "None", "clusterIPs": ["None"]}}),
        ),
        (
            "job: generated selector and labels go",
            json!({"kind": "Job", "spec": {"selector": {"matchLabels": {"controller-uid": "u"}},
                "template": {"metadata": {"labels": {"app": "a", "controller-uid": "u",
                "batch.kubernetes.io/controller-uid": "u", "job-name": "j",
                "batch.kubernetes.io/job-name": "j"}}}}}),
            json!({"kind": "Job", "spec": {"template": {"metadata": {"labels": {"app": "a"}}}}}),
        ),
        (
            "job: a manual selector stays",
            json!({"kind": "Job", "spec": {"manualSelector": true, "selector": {"matchLabels": {"a": "b"}}}}),
            json!({"kind": "Job", "spec": {"manualSelector": true, "selector": {"matchLabels": {"a": "b"}}}}),
        ),
        (
            "pvc: bound volume goes",
            json!({"kind": "PersistentVolumeClaim", "spec": {"volumeName": "pv-1", "resources": {}}}),
            json!({"kind": "PersistentVolumeClaim", "spec": {"resources": {}}}),
        ),
        (
            "clusterIP of another kind is not touched",
            json!({"kind": "Widget", "spec": {"clusterIP": "1.2.3.4"}}),
            json!({"kind": "Widget", "spec": {"clusterIP": "1.2.3.4"}}),
        ),
    ];
    for (name, mut input, want) in cases {
        strip_hub_fields(&mut input);
        assert_eq!(input, want, "{name}");
        strip_hub_fields(&mut input);
        assert_eq!(input, want, "{name} (twice)");
    }
}
