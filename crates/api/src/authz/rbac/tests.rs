//! RBAC rule evaluation, table-driven.

use serde_json::{json, Value};

use super::*;

struct P {
    crbs: Vec<Value>,
    rbs: Vec<Value>,
    crs: Vec<Value>,
    roles: Vec<Value>,
}

impl Policy for P {
    fn cluster_role_bindings(&self) -> Vec<Value> {
        self.crbs.clone()
    }
    fn role_bindings(&self, ns: &str) -> Vec<Value> {
        self.rbs
            .iter()
            .filter(|b| b["metadata"]["namespace"] == ns)
            .cloned()
            .collect()
    }
    fn cluster_role(&self, name: &str) -> Option<Value> {
        self.crs
            .iter()
            .find(|r| r["metadata"]["name"] == name)
            .cloned()
    }
    fn cluster_roles(&self) -> Vec<Value> {
        self.crs.clone()
    }
    fn role(&self, ns: &str, name: &str) -> Option<Value> {
        self.roles
            .iter()
            .find(|r| r["metadata"]["name"] == name && r["metadata"]["namespace"] == ns)
            .cloned()
    }
}

fn user(name: &str, groups: &[&str]) -> User {
    User {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
    }
}

fn policy() -> P {
    P {
        crbs: vec![
            json!({"metadata": {"name": "readers"}, "roleRef": {"kind": "ClusterRole", "name": "reader"}, "subjects": [{"kind": "Group", "name": "readers"}]}),
            json!({"metadata": {"name": "disc"}, "roleRef": {"kind": "ClusterRole", "name": "discovery"}, "subjects": [{"kind": "Group", "name": "system:authenticated"}]}),
            json!({"metadata": {"name": "agg"}, "roleRef": {"kind": "ClusterRole", "name": "aggregate"}, "subjects": [{"kind": "User", "name": "agg-user"}]}),
        ],
        rbs: vec![
            json!({"metadata": {"name": "sa-cm", "namespace": "ns1"}, "roleRef": {"kind": "Role", "name": "cm-writer"}, "subjects": [{"kind": "ServiceAccount", "name": "bot"}]}),
            json!({"metadata": {"name": "alice-edit", "namespace": "ns2"}, "roleRef": {"kind": "ClusterRole", "name": "reader"}, "subjects": [{"kind": "User", "name": "alice"}]}),
        ],
        crs: vec![
            json!({"metadata": {"name": "reader"}, "rules": [{"apiGroups": ["", "apps"], "resources": ["configmaps", "deployments", "deployments/scale"], "verbs": ["get", "list", "watch"]}]}),
            json!({"metadata": {"name": "discovery"}, "rules": [{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/version"], "verbs": ["get"]}]}),
            json!({"metadata": {"name": "aggregate"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "yes"}}]}, "rules": []}),
            json!({"metadata": {"name": "part", "labels": {"agg": "yes"}}, "rules": [{"apiGroups": ["*"], "resources": ["*/status"], "verbs": ["*"]}]}),
        ],
        roles: vec![
            json!({"metadata": {"name": "cm-writer", "namespace": "ns1"}, "rules": [
            {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]},
            {"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["only-this"], "verbs": ["get"]}]}),
        ],
    }
}

#[test]
fn rbac_table() {
    let p = policy();
    let bot = user(
        "system:serviceaccount:ns1:bot",
        &["system:serviceaccounts", "system:authenticated"],
    );
    let alice = user("alice", &["system:authenticated"]);
    let reader = user("rita", &["readers", "system:authenticated"]);
    let agg = user("agg-user", &["system:authenticated"]);
    let r = |verb, group, resource, sub, ns, name| Attributes {
        verb,
        group,
        resource,
        subresource: sub,
        namespace: ns,
        name,
        path: "",
        resource_request: true,
    };
    let cases: Vec<(&User, Attributes<'_>, bool)> = vec![
        (
            &bot,
            r("create", "", "configmaps", None, Some("ns1"), None),
            true,
        ),
        (
            &bot,
            r("delete", "", "configmaps", None, Some("ns1"), Some("x")),
            true,
        ),
        (
            &bot,
            r("list", "", "configmaps", None, Some("ns2"), None),
            false,
        ),
        (
            &bot,
            r("get", "", "secrets", None, Some("ns1"), Some("only-this")),
            true,
        ),
        (
            &bot,
            r("get", "", "secrets", None, Some("ns1"), Some("other")),
            false,
        ),
        (
            &bot,
            r("list", "", "secrets", None, Some("ns1"), None),
            false,
        ),
        (&bot, r("list", "", "configmaps", None, None, None), false),
        (
            &alice,
            r("get", "apps", "deployments", None, Some("ns2"), Some("d")),
            true,
        ),
        (
            &alice,
            r("get", "apps", "deployments", None, Some("ns1"), Some("d")),
            false,
        ),
        (
            &alice,
            r(
                "update",
                "apps",
                "deployments",
                None,
                Some("ns2"),
                Some("d"),
            ),
            false,
        ),
        (
            &reader,
            r("watch", "", "configmaps", None, None, None),
            true,
        ),
        (
            &reader,
            r(
                "get",
                "apps",
                "deployments",
                Some("scale"),
                Some("x"),
                Some("d"),
            ),
            true,
        ),
        (
            &reader,
            r(
                "get",
                "apps",
                "deployments",
                Some("status"),
                Some("x"),
                Some("d"),
            ),
            false,
        ),
        (
            &reader,
            r("get", "batch", "jobs", None, Some("x"), Some("j")),
            false,
        ),
        (
            &agg,
            r(
                "update",
                "apps",
                "deployments",
                Some("status"),
                Some("x"),
                Some("d"),
            ),
            true,
        ),
        (
            &agg,
            r("update", "apps", "deployments", None, Some("x"), Some("d")),
            false,
        ),
    ];
    for (i, (u, a, want)) in cases.iter().enumerate() {
        let got = matches!(authorize(&p, u, a), Decision::Allow(_));
        assert_eq!(got, *want, "case {i}: {} {a:?}", u.name);
    }
    let nr = |path| Attributes {
        verb: "get",
        path,
        resource_request: false,
        ..Default::default()
    };
    assert!(matches!(
        authorize(&p, &bot, &nr("/apis/apps/v1")),
        Decision::Allow(_)
    ));
    assert!(matches!(
        authorize(&p, &bot, &nr("/version")),
        Decision::Allow(_)
    ));
    assert_eq!(authorize(&p, &bot, &nr("/metrics")), Decision::Deny);
}

#[test]
fn forbidden_message_reads_like_kubernetes() {
    let a = Attributes {
        verb: "list",
        group: "",
        resource: "secrets",
        namespace: Some("ns1"),
        resource_request: true,
        ..Default::default()
    };
    assert_eq!(
        forbidden_message(&user("alice", &[]), &a),
        "secrets is forbidden: User \"alice\" cannot list resource \"secrets\" in API group \"\" in the namespace \"ns1\""
    );
}
