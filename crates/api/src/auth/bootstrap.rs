//! The default ClusterRoles and ClusterRoleBindings the hub creates at first start.
//!
//! Names and intent follow Kubernetes' bootstrap policy so that manifests, Helm charts and
//! habits written for Kubernetes work unchanged (`kubectl create rolebinding --clusterrole=edit`),
//! but the rules are written for what the hub serves: it runs no workloads, so there are no pod,
//! node or volume rules.
//!
//! - `cluster-admin`: everything; bound to `system:masters`.
//! - `admin` ⊃ `edit` ⊃ `view`: aggregated ClusterRoles meant for RoleBindings. Each collects the
//!   ClusterRoles labelled `rbac.authorization.k8s.io/aggregate-to-{admin,edit,view}: "true"`;
//!   `edit` carries the `aggregate-to-admin` label and `view` the `aggregate-to-edit` one, so each
//!   includes the next, and the `system:aggregate-to-*` roles hold the actual rules. A CRD author
//!   extends them by labelling their own ClusterRole.
//! - `system:discovery`, `system:basic-user`: discovery documents and self-reviews for every
//!   authenticated user.
//! - `system:auth-delegator`: TokenReviews and SubjectAccessReviews, bound to no one.
//! - `system:public-info-viewer`: health and version, for everyone including anonymous callers.
//! - `system:service-account-issuer-discovery`: the OIDC documents, for service accounts.
//! - `system:monitoring`: `/metrics` and detailed health, for the `system:monitoring` group.
//!
//! - `flotilla-dns-reader`: what a `flotilla dns` process reads from the hub (the fleet zone's
//!   Clusters, Services, ResourceBindings, GlobalServices and HealthReports, the clusterset
//!   zone's ServiceImports and EndpointSlices); bound to no one, bind its credential to it.
//!
//! flotilla's other API groups have no roles yet; they are added with the groups.

use serde_json::{json, Value};

use crate::registry::ALL_VERBS;

const RBAC_V1: &str = "rbac.authorization.k8s.io/v1";
const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];

/// The label that pulls a ClusterRole into `admin`.
pub const AGGREGATE_TO_ADMIN: &str = "rbac.authorization.k8s.io/aggregate-to-admin";
/// The label that pulls a ClusterRole into `edit` (and so `admin`).
pub const AGGREGATE_TO_EDIT: &str = "rbac.authorization.k8s.io/aggregate-to-edit";
/// The label that pulls a ClusterRole into `view` (and so `edit` and `admin`).
pub const AGGREGATE_TO_VIEW: &str = "rbac.authorization.k8s.io/aggregate-to-view";
/// The ClusterRole of a `flotilla dns` process's credential: read-only, what DNS answers from.
pub const DNS_READER: &str = "flotilla-dns-reader";
/// Marks the objects as defaults the hub keeps up to date, as Kubernetes marks its own.
pub const AUTOUPDATE_ANNOTATION: &str = "rbac.authorization.kubernetes.io/autoupdate";

fn metadata(name: &str, labels: &[(&str, &str)]) -> Value {
    let mut l = serde_json::Map::new();
    l.insert("kubernetes.io/bootstrapping".into(), json!("rbac-defaults"));
    for (k, v) in labels {
        l.insert((*k).into(), json!(v));
    }
    json!({"name": name, "labels": l, "annotations": {AUTOUPDATE_ANNOTATION: "true"}})
}

fn rule(verbs: &[&str], group: &str, resources: &[&str]) -> Value {
    json!({"verbs": verbs, "apiGroups": [group], "resources": resources})
}

fn url_rule(urls: &[&str]) -> Value {
    json!({"verbs": ["get"], "nonResourceURLs": urls})
}

fn cluster_role(name: &str, labels: &[(&str, &str)], rules: Vec<Value>) -> Value {
    json!({"apiVersion": RBAC_V1, "kind": "ClusterRole", "metadata": metadata(name, labels), "rules": rules})
}

fn aggregated(name: &str, labels: &[(&str, &str)], from: &str) -> Value {
    json!({
        "apiVersion": RBAC_V1, "kind": "ClusterRole", "metadata": metadata(name, labels),
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {from: "true"}}]},
        "rules": [],
    })
}

fn binding(role: &str, groups: &[&str]) -> Value {
    let subjects: Vec<Value> = groups
        .iter()
        .map(|g| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}))
        .collect();
    json!({
        "apiVersion": RBAC_V1, "kind": "ClusterRoleBinding", "metadata": metadata(role, &[]),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects,
    })
}

/// Workload-facing resources a namespace's users read (`view`) and write (`edit`), by group.
const NAMESPACED: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "configmaps",
            "endpoints",
            "persistentvolumeclaims",
            "services",
            "serviceaccounts",
        ],
    ),
    (
        "apps",
        &[
            "daemonsets",
            "deployments",
            "deployments/scale",
            "replicasets",
            "replicasets/scale",
            "statefulsets",
            "statefulsets/scale",
        ],
    ),
    ("autoscaling", &["horizontalpodautoscalers"]),
    ("batch", &["cronjobs", "jobs"]),
    ("networking.k8s.io", &["ingresses", "networkpolicies"]),
    ("policy", &["poddisruptionbudgets"]),
];

/// Status subresources and read-only resources `view` adds.
const VIEW_ONLY: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "events",
            "namespaces",
            "namespaces/status",
            "persistentvolumeclaims/status",
            "services/status",
        ],
    ),
    (
        "apps",
        &[
            "daemonsets/status",
            "deployments/status",
            "replicasets/status",
            "statefulsets/status",
        ],
    ),
    ("autoscaling", &["horizontalpodautoscalers/status"]),
    ("batch", &["cronjobs/status", "jobs/status"]),
    ("networking.k8s.io", &["ingresses/status"]),
    ("policy", &["poddisruptionbudgets/status"]),
    ("events.k8s.io", &["events"]),
];

fn aggregate_to_view() -> Vec<Value> {
    NAMESPACED
        .iter()
        .chain(VIEW_ONLY)
        .map(|(group, resources)| rule(READ, group, resources))
        .collect()
}

fn aggregate_to_edit() -> Vec<Value> {
    let mut rules: Vec<Value> = NAMESPACED
        .iter()
        .map(|(group, resources)| rule(WRITE, group, resources))
        .collect();
    // Secrets are readable and writable from `edit` up, never from `view`.
    rules.push(rule(ALL_VERBS, "", &["secrets"]));
    rules.push(rule(&["create"], "", &["serviceaccounts/token"]));
    rules.push(rule(&["impersonate"], "", &["serviceaccounts"]));
    rules
}

fn aggregate_to_admin() -> Vec<Value> {
    // Managing access within the namespace is what sets `admin` apart from `edit`.
    vec![rule(
        ALL_VERBS,
        "rbac.authorization.k8s.io",
        &["rolebindings", "roles"],
    )]
}

/// The default ClusterRoles.
pub fn cluster_roles() -> Vec<Value> {
    let health = ["/healthz", "/livez", "/readyz", "/version", "/version/"];
    let mut discovery = vec![
        "/api",
        "/api/*",
        "/apis",
        "/apis/*",
        "/openapi",
        "/openapi/*",
    ];
    discovery.extend(health);
    vec![
        cluster_role(
            "cluster-admin",
            &[],
            vec![
                json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
                json!({"verbs": ["*"], "nonResourceURLs": ["*"]}),
            ],
        ),
        aggregated("admin", &[], AGGREGATE_TO_ADMIN),
        aggregated("edit", &[(AGGREGATE_TO_ADMIN, "true")], AGGREGATE_TO_EDIT),
        aggregated("view", &[(AGGREGATE_TO_EDIT, "true")], AGGREGATE_TO_VIEW),
        cluster_role(
            "system:aggregate-to-admin",
            &[(AGGREGATE_TO_ADMIN, "true")],
            aggregate_to_admin(),
        ),
        cluster_role(
            "system:aggregate-to-edit",
            &[(AGGREGATE_TO_EDIT, "true")],
            aggregate_to_edit(),
        ),
        cluster_role(
            "system:aggregate-to-view",
            &[(AGGREGATE_TO_VIEW, "true")],
            aggregate_to_view(),
        ),
        cluster_role("system:discovery", &[], vec![url_rule(&discovery)]),
        cluster_role(
            "system:basic-user",
            &[],
            vec![
                rule(
                    &["create"],
                    "authorization.k8s.io",
                    &["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                ),
                rule(
                    &["create"],
                    "authentication.k8s.io",
                    &["selfsubjectreviews"],
                ),
            ],
        ),
        // Bound to no one: for whoever checks tokens and permissions on the hub's behalf.
        cluster_role(
            "system:auth-delegator",
            &[],
            vec![
                rule(&["create"], "authentication.k8s.io", &["tokenreviews"]),
                rule(
                    &["create"],
                    "authorization.k8s.io",
                    &["subjectaccessreviews"],
                ),
            ],
        ),
        cluster_role("system:public-info-viewer", &[], vec![url_rule(&health)]),
        // Bound to no one: `kubectl create clusterrolebinding dns --clusterrole=flotilla-dns-reader`.
        cluster_role(
            DNS_READER,
            &[],
            vec![
                rule(READ, "cluster.flotilla.io", &["clusters"]),
                rule(READ, "", &["services"]),
                rule(READ, "work.flotilla.io", &["resourcebindings"]),
                rule(
                    READ,
                    "networking.flotilla.io",
                    &["globalservices", "healthreports"],
                ),
                rule(READ, "multicluster.x-k8s.io", &["serviceimports"]),
                rule(READ, "discovery.k8s.io", &["endpointslices"]),
            ],
        ),
        cluster_role(
            "system:service-account-issuer-discovery",
            &[],
            vec![url_rule(&[
                "/.well-known/openid-configuration",
                "/.well-known/openid-configuration/",
                "/openid/v1/jwks",
                "/openid/v1/jwks/",
            ])],
        ),
        cluster_role(
            "system:monitoring",
            &[],
            vec![url_rule(&[
                "/healthz",
                "/healthz/*",
                "/livez",
                "/livez/*",
                "/metrics",
                "/readyz",
                "/readyz/*",
            ])],
        ),
    ]
}

/// The default ClusterRoleBindings (each named after its role).
pub fn cluster_role_bindings() -> Vec<Value> {
    use crate::auth::user::{AUTHENTICATED, SERVICE_ACCOUNTS, SYSTEM_MASTERS, UNAUTHENTICATED};
    vec![
        binding("cluster-admin", &[SYSTEM_MASTERS]),
        binding("system:discovery", &[AUTHENTICATED]),
        binding("system:basic-user", &[AUTHENTICATED]),
        binding(
            "system:public-info-viewer",
            &[AUTHENTICATED, UNAUTHENTICATED],
        ),
        binding(
            "system:service-account-issuer-discovery",
            &[SERVICE_ACCOUNTS],
        ),
        binding("system:monitoring", &["system:monitoring"]),
    ]
}

/// Roles then bindings, in the order to create them.
pub fn objects() -> Vec<Value> {
    let mut all = cluster_roles();
    all.extend(cluster_role_bindings());
    all
}
