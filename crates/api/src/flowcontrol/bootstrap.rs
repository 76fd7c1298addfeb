//! The configuration objects kube-apiserver keeps in every cluster: the mandatory FlowSchemas
//! and PriorityLevelConfigurations (`exempt`, `catch-all`), which always exist with exactly
//! this spec, and the suggested ones, which are created when missing and kept up to date unless
//! their `apf.kubernetes.io/autoupdate-spec` annotation says `false`. Specs as in Kubernetes
//! 1.32, already defaulted (as the controller compares them with stored objects).

use serde_json::{json, Value};

/// The annotation that says whether the hub keeps an object's spec as it suggests it.
pub const AUTOUPDATE_ANNOTATION: &str = "apf.kubernetes.io/autoupdate-spec";

const API_VERSION: &str = "flowcontrol.apiserver.k8s.io/v1";

fn object(kind: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": API_VERSION,
        "kind": kind,
        "metadata": {"name": name, "annotations": {AUTOUPDATE_ANNOTATION: "true"}},
        "spec": spec,
    })
}

fn limited(name: &str, shares: i64, lendable: i64, queuing: Option<(i64, i64)>) -> Value {
    let limit_response = match queuing {
        None => json!({"type": "Reject"}),
        Some((queues, hand_size)) => json!({
            "type": "Queue",
            "queuing": {"queues": queues, "handSize": hand_size, "queueLengthLimit": 50},
        }),
    };
    object(
        "PriorityLevelConfiguration",
        name,
        json!({
            "type": "Limited",
            "limited": {
                "nominalConcurrencyShares": shares,
                "lendablePercent": lendable,
                "limitResponse": limit_response,
            },
        }),
    )
}

fn groups(names: &[&str]) -> Value {
    names
        .iter()
        .map(|n| json!({"kind": "Group", "group": {"name": n}}))
        .collect()
}

fn users(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({"kind": "User", "user": {"name": n}}))
        .collect()
}

fn kube_system_accounts(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| {
            json!({"kind": "ServiceAccount",
                   "serviceAccount": {"name": n, "namespace": "kube-system"}})
        })
        .collect()
}

fn every(verbs: &[&str], groups: &[&str], resources: &[&str], cluster_scope: bool) -> Value {
    let mut r = json!({
        "verbs": verbs, "apiGroups": groups, "resources": resources, "namespaces": ["*"],
    });
    if cluster_scope {
        r["clusterScope"] = json!(true);
    }
    r
}

fn everything() -> Value {
    json!([every(&["*"], &["*"], &["*"], true)])
}

fn all_urls() -> Value {
    json!([{"verbs": ["*"], "nonResourceURLs": ["*"]}])
}

fn schema(name: &str, level: &str, precedence: i64, method: Option<&str>, rule: Value) -> Value {
    let mut spec = json!({
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
        "rules": [rule],
    });
    if let Some(m) = method {
        spec["distinguisherMethod"] = json!({"type": m});
    }
    object("FlowSchema", name, spec)
}

/// Every subject, every request.
fn all_of(subjects: Value) -> Value {
    json!({"subjects": subjects, "resourceRules": everything(), "nonResourceRules": all_urls()})
}

/// `exempt` and `catch-all`.
pub fn mandatory_priority_levels() -> Vec<Value> {
    vec![
        limited("catch-all", 5, 0, None),
        object(
            "PriorityLevelConfiguration",
            "exempt",
            json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
        ),
    ]
}

/// `exempt` (system:masters, precedence 1) and `catch-all` (everyone, precedence 10000).
pub fn mandatory_flow_schemas() -> Vec<Value> {
    vec![
        schema(
            "exempt",
            "exempt",
            1,
            None,
            all_of(groups(&["system:masters"])),
        ),
        schema(
            "catch-all",
            "catch-all",
            10000,
            Some("ByUser"),
            all_of(groups(&["system:unauthenticated", "system:authenticated"])),
        ),
    ]
}

/// The suggested priority levels.
pub fn suggested_priority_levels() -> Vec<Value> {
    vec![
        limited("system", 30, 33, Some((64, 6))),
        limited("node-high", 40, 25, Some((64, 6))),
        limited("leader-election", 10, 0, Some((16, 4))),
        limited("workload-high", 40, 50, Some((128, 6))),
        limited("workload-low", 100, 90, Some((128, 6))),
        limited("global-default", 20, 50, Some((128, 6))),
    ]
}

/// The suggested flow schemas.
pub fn suggested_flow_schemas() -> Vec<Value> {
    const KCM: &str = "system:kube-controller-manager";
    const SCHEDULER: &str = "system:kube-scheduler";
    let leases = || {
        every(
            &["get", "create", "update"],
            &["coordination.k8s.io"],
            &["leases"],
            false,
        )
    };
    let concat = |a: Vec<Value>, b: Vec<Value>| Value::Array(a.into_iter().chain(b).collect());
    vec![
        schema(
            "system-nodes",
            "system",
            500,
            Some("ByUser"),
            all_of(groups(&["system:nodes"])),
        ),
        schema(
            "system-node-high",
            "node-high",
            400,
            Some("ByUser"),
            json!({"subjects": groups(&["system:nodes"]), "resourceRules": [
                every(&["*"], &[""], &["nodes", "nodes/status"], true),
                every(&["*"], &["coordination.k8s.io"], &["leases"], false),
            ]}),
        ),
        schema(
            "probes",
            "exempt",
            2,
            None,
            json!({"subjects": groups(&["system:unauthenticated", "system:authenticated"]),
                   "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}),
        ),
        schema(
            "system-leader-election",
            "leader-election",
            100,
            Some("ByUser"),
            json!({"subjects": concat(users(&[KCM, SCHEDULER]), kube_system_accounts(&["*"])),
                   "resourceRules": [leases()]}),
        ),
        schema(
            "workload-leader-election",
            "leader-election",
            200,
            Some("ByUser"),
            json!({"subjects": kube_system_accounts(&["*"]), "resourceRules": [
                every(&["get", "create", "update"], &[""], &["endpoints", "configmaps"], false),
                leases(),
            ]}),
        ),
        schema(
            "endpoint-controller",
            "workload-high",
            150,
            Some("ByUser"),
            json!({"subjects": concat(users(&[KCM]), kube_system_accounts(&["endpoint-controller", "endpointslicemirroring-controller"])),
                   "resourceRules": [every(&["get", "create", "update"], &[""], &["endpoints"], false)]}),
        ),
        schema(
            "kube-controller-manager",
            "workload-high",
            800,
            Some("ByNamespace"),
            all_of(Value::Array(users(&[KCM]))),
        ),
        schema(
            "kube-scheduler",
            "workload-high",
            800,
            Some("ByNamespace"),
            all_of(Value::Array(users(&[SCHEDULER]))),
        ),
        schema(
            "kube-system-service-accounts",
            "workload-high",
            900,
            Some("ByNamespace"),
            all_of(Value::Array(kube_system_accounts(&["*"]))),
        ),
        schema(
            "service-accounts",
            "workload-low",
            9000,
            Some("ByUser"),
            all_of(groups(&["system:serviceaccounts"])),
        ),
        schema(
            "global-default",
            "global-default",
            9900,
            Some("ByUser"),
            all_of(groups(&["system:unauthenticated", "system:authenticated"])),
        ),
    ]
}

/// The mandatory object of `kind` named `name`, if it is one.
pub fn mandatory(kind: &str, name: &str) -> Option<Value> {
    let all = match kind {
        "FlowSchema" => mandatory_flow_schemas(),
        "PriorityLevelConfiguration" => mandatory_priority_levels(),
        _ => return None,
    };
    all.into_iter()
        .find(|o| o.pointer("/metadata/name").and_then(Value::as_str) == Some(name))
}
