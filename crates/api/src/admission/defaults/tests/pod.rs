//! Pod templates: image pull policy, containers, probes and volumes.

use serde_json::json;

use super::*;
use crate::admission::defaults;

#[test]
fn pull_policy_follows_the_tag() {
    for (image, want) in [
        ("nginx", "Always"),
        ("nginx:latest", "Always"),
        ("docker.io/library/nginx", "Always"),
        ("localhost:5000/team/app", "Always"),
        ("nginx:1.25", "IfNotPresent"),
        ("registry.example.com:5000/app:v2", "IfNotPresent"),
        (
            "nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "IfNotPresent",
        ),
        (
            "nginx:latest@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
            "Always",
        ),
        // Unparseable references: the error is ignored and the tag is empty.
        ("", "IfNotPresent"),
        ("Nginx", "IfNotPresent"),
        ("nginx:bad tag", "IfNotPresent"),
    ] {
        assert_eq!(defaults::pod::pull_policy(image), want, "{image:?}");
    }
}

#[test]
fn containers_probes_and_volumes() {
    let spec = json!({
        "initContainers": [{"name": "i", "image": "busybox:1", "imagePullPolicy": "Never"}],
        "containers": [{
            "name": "c", "image": "app:1",
            "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
            "env": [{"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}, {"name": "X", "value": "1"}],
            "livenessProbe": {"httpGet": {"port": 80}},
            "readinessProbe": {"grpc": {"port": 9000}, "periodSeconds": 5},
            "startupProbe": {"exec": {"command": ["true"]}, "failureThreshold": 30},
            "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/quit"}}},
        }],
        "volumes": [
            {"name": "scratch"},
            {"name": "s", "secret": {"secretName": "s"}},
            {"name": "cm", "configMap": {"name": "c", "defaultMode": 256}},
            {"name": "d", "downwardAPI": {"items": [{"path": "p", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
            {"name": "p", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}},
            {"name": "h", "hostPath": {"path": "/var"}},
            {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
        ],
    });
    let d = defaulted(
        "apps",
        "v1",
        "deployments",
        json!({"spec": {"template": {"spec": spec}}}),
    );
    let s = &d["spec"]["template"]["spec"];
    assert_eq!(s["initContainers"][0]["imagePullPolicy"], "Never");
    assert_eq!(s["initContainers"][0]["terminationMessagePolicy"], "File");
    let c = &s["containers"][0];
    assert_eq!(
        c["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}])
    );
    assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
    assert_eq!(
        c["livenessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(c["readinessProbe"]["grpc"]["service"], "");
    assert_eq!(c["readinessProbe"]["periodSeconds"], 5);
    assert_eq!(c["startupProbe"]["failureThreshold"], 30);
    assert_eq!(
        c["lifecycle"]["preStop"]["httpGet"],
        json!({"port": 80, "path": "/quit", "scheme": "HTTP"})
    );
    let v = &s["volumes"];
    assert_eq!(v[0], json!({"name": "scratch", "emptyDir": {}}));
    assert_eq!(v[1]["secret"]["defaultMode"], 420);
    assert_eq!(v[2]["configMap"]["defaultMode"], 256);
    assert_eq!(v[3]["downwardAPI"]["defaultMode"], 420);
    assert_eq!(
        v[3]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
        "v1"
    );
    assert_eq!(v[4]["projected"]["defaultMode"], 420);
    assert_eq!(
        v[4]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        3600
    );
    assert_eq!(v[5]["hostPath"]["type"], "");
    assert_eq!(
        v[6]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"],
        "Filesystem"
    );
}
