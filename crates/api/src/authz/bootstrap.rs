//! The roles and bindings every cluster starts with, created at first start when absent.
//! Names and intent follow Kubernetes' defaults; the rules are ours.

use serde_json::{json, Value};

fn role(name: &str, labels: Value, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name, "labels": labels}, "rules": rules})
}

fn binding(name: &str, role: &str, group: &str) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
           "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}]})
}

const READ: [&str; 3] = ["get", "list", "watch"];
const WRITE: [&str; 6] = [
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
    "get",
];

/// Default ClusterRoles and ClusterRoleBindings.
pub fn defaults() -> Vec<Value> {
    let boot = json!({"kubernetes.io/bootstrapping": "rbac-defaults"});
    let workloads = json!([
        {"apiGroups": [""], "resources": ["configmaps", "endpoints", "persistentvolumeclaims", "services", "serviceaccounts", "events"], "verbs": READ},
        {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets", "daemonsets", "replicasets", "deployments/scale", "statefulsets/scale", "replicasets/scale"], "verbs": READ},
        {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": READ},
        {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": READ},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses", "networkpolicies"], "verbs": READ},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": READ},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": READ},
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": READ},
    ]);
    let edit = json!([
        {"apiGroups": ["", "apps", "batch", "autoscaling", "networking.k8s.io", "policy", "coordination.k8s.io"],
         "resources": ["configmaps", "secrets", "services", "serviceaccounts", "persistentvolumeclaims", "endpoints", "events",
                       "deployments", "statefulsets", "daemonsets", "replicasets", "deployments/scale", "statefulsets/scale", "replicasets/scale",
                       "jobs", "cronjobs", "horizontalpodautoscalers", "ingresses", "networkpolicies", "poddisruptionbudgets", "leases"],
         "verbs": WRITE.iter().chain(READ.iter()).collect::<Vec<_>>()},
        {"apiGroups": [""], "resources": ["serviceaccounts/token"], "verbs": ["create"]},
    ]);
    let admin = json!([
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": WRITE.iter().chain(READ.iter()).collect::<Vec<_>>()},
    ]);
    vec![
        role(
            "cluster-admin",
            boot.clone(),
            json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, {"nonResourceURLs": ["*"], "verbs": ["*"]}]),
        ),
        role(
            "view",
            json!({"kubernetes.io/bootstrapping": "rbac-defaults", "rbac.authorization.k8s.io/aggregate-to-edit": "true"}),
            workloads,
        ),
        role(
            "edit",
            json!({"kubernetes.io/bootstrapping": "rbac-defaults", "rbac.authorization.k8s.io/aggregate-to-admin": "true"}),
            edit,
        ),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "admin", "labels": boot.clone()},
               "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}, {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-edit": "true"}}]},
               "rules": admin}),
        role(
            "system:discovery",
            boot.clone(),
            json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", "/version", "/version/", "/healthz", "/livez", "/readyz"], "verbs": ["get"]}]),
        ),
        role(
            "system:public-info-viewer",
            boot.clone(),
            json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}]),
        ),
        role(
            "system:basic-user",
            boot,
            json!([{"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"], "verbs": ["create"]}]),
        ),
        binding("cluster-admin", "cluster-admin", "system:masters"),
        binding(
            "system:discovery",
            "system:discovery",
            "system:authenticated",
        ),
        binding(
            "system:basic-user",
            "system:basic-user",
            "system:authenticated",
        ),
        binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            "system:authenticated",
        ),
    ]
}
