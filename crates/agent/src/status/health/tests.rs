//! Health of the other well-known kinds, and of any kind by its conditions.

use serde_json::{json, Value};

use crate::status::workloads::tests::check;

/// The case's `object` as it is.
fn whole(case: &Value) -> Value {
    case["object"].clone()
}

#[test]
fn pods() {
    check(
        json!([
            {"what": "ready", "expect": "available", "message": "pod is ready",
             "status": {"phase": "Running", "conditions": [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}]}},
            {"what": "crash-looping", "expect": "pending", "message": "containers with unready status: [web]",
             "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                                                             "message": "containers with unready status: [web]"}]}},
            {"what": "evicted", "expect": "degraded", "message": "pod failed: Evicted: The node was low on resource: memory.",
             "status": {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}},
            {"what": "ran to completion", "expect": "available", "message": "pod succeeded",
             "status": {"phase": "Succeeded", "conditions": [{"type": "Ready", "status": "False", "reason": "PodCompleted"}]}},
            {"what": "unscheduled", "expect": "pending", "message": "pod is Pending", "status": {"phase": "Pending"}}
        ]),
        |case| {
            json!({
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "demo"},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}, "status": case["status"],
            })
        },
    );
}

#[test]
fn services() {
    check(
        json!([
            {"what": "ClusterIP", "expect": "available", "message": "exists", "type": "ClusterIP", "status": {"loadBalancer": {}}},
            {"what": "NodePort", "expect": "available", "message": "exists", "type": "NodePort", "status": {}},
            {"what": "LoadBalancer without ingress", "expect": "pending", "message": "waiting for the load balancer",
             "type": "LoadBalancer", "status": {"loadBalancer": {}}},
            {"what": "LoadBalancer with ingress", "expect": "available", "message": "1 ingress",
             "type": "LoadBalancer", "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7", "ipMode": "VIP"}]}}}
        ]),
        |case| {
            json!({
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "demo"},
                "spec": {"type": case["type"], "clusterIP": "10.96.0.12", "ports": [{"port": 80}]}, "status": case["status"],
            })
        },
    );
}

#[test]
fn claims_namespaces_definitions() {
    check(
        json!([
            {"what": "claim bound", "expect": "available", "message": "bound", "object":
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "demo"},
                 "status": {"phase": "Bound", "capacity": {"storage": "1Gi"}}}},
            {"what": "claim waiting for a volume", "expect": "pending", "message": "claim is Pending", "object":
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "demo"},
                 "status": {"phase": "Pending"}}},
            {"what": "claim lost", "expect": "degraded", "message": "lost", "object":
                {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "demo"},
                 "status": {"phase": "Lost"}}},
            {"what": "namespace active", "expect": "available", "message": "active", "object":
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}, "status": {"phase": "Active"}}},
            {"what": "namespace without status", "expect": "available", "message": "active", "object":
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}}},
            {"what": "namespace terminating", "expect": "pending", "message": "Terminating", "object":
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo"}, "status": {"phase": "Terminating"}}},
            {"what": "definition established", "expect": "available", "message": "established", "object":
                {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
                 "status": {"conditions": [{"type": "NamesAccepted", "status": "True"}, {"type": "Established", "status": "True"}]}}},
            {"what": "definition not yet established", "expect": "pending", "message": "established", "object":
                {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
                 "status": {"conditions": [{"type": "NamesAccepted", "status": "True"}, {"type": "Established", "status": "False"}]}}},
            {"what": "definition names clash", "expect": "degraded", "message": "ListKindConflict: \"WidgetList\" is already in use", "object":
                {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com"},
                 "status": {"conditions": [{"type": "NamesAccepted", "status": "False", "reason": "ListKindConflict",
                                            "message": "\"WidgetList\" is already in use"}]}}}
        ]),
        whole,
    );
}

#[test]
fn other_kinds_by_conditions() {
    check(
        json!([
            {"what": "Ready=True", "expect": "available", "message": "Ready=True: Ready: Certificate is up to date", "object":
                {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "web-tls", "namespace": "demo", "generation": 1},
                 "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "observedGeneration": 1,
                                            "message": "Certificate is up to date and has not expired"}]}}},
            {"what": "Ready=False", "expect": "pending", "message": "Ready=False: DoesNotExist: Issuing certificate as Secret does not exist", "object":
                {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "web-tls", "namespace": "demo", "generation": 1},
                 "status": {"conditions": [{"type": "Issuing", "status": "True"},
                                           {"type": "Ready", "status": "False", "reason": "DoesNotExist",
                                            "message": "Issuing certificate as Secret does not exist"}]}}},
            {"what": "Ready stamped for an older generation", "expect": "pending", "message": "waiting for generation 3", "object":
                {"apiVersion": "cert-manager.io/v1", "kind": "Certificate", "metadata": {"name": "web-tls", "namespace": "demo", "generation": 3},
                 "status": {"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}]}}},
            {"what": "Ready wins over Available", "expect": "pending", "message": "Ready=False", "object":
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                 "status": {"conditions": [{"type": "Available", "status": "True"}, {"type": "Ready", "status": "False"}]}}},
            {"what": "Available without Ready", "expect": "pending", "message": "Available=Unknown", "object":
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                 "status": {"conditions": [{"type": "Available", "status": "Unknown"}]}}},
            {"what": "no conditions: existing is enough", "expect": "available", "message": "exists", "object":
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "demo"}, "data": {"a": "b"}}},
            {"what": "a Deployment of another group is judged by conditions", "expect": "available", "message": "exists", "object":
                {"apiVersion": "example.com/v1", "kind": "Deployment", "metadata": {"name": "d", "generation": 2}, "status": {}}}
        ]),
        whole,
    );
}
