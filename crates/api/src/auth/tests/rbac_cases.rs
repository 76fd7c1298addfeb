use serde_json::{json, Value};

use crate::auth::rbac::{
    authorize, forbidden_message, forbidden_status_message, rules_for, Attributes, Policy,
};
use crate::auth::user::UserInfo;

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo::authenticated(name, groups.iter().map(|g| g.to_string()).collect())
}

fn sa(ns: &str, name: &str) -> UserInfo {
    UserInfo::service_account(ns, name, "uid")
}

fn get(u: &UserInfo, group: &str, resource: &str) -> Attributes {
    Attributes::resource(u.clone(), "get", group, resource)
}

fn cluster_role(name: &str, labels: Value, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name, "labels": labels}, "rules": rules})
}

fn aggregated(name: &str, labels: Value, selector: Value, stale_rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
           "metadata": {"name": name, "labels": labels},
           "aggregationRule": {"clusterRoleSelectors": [selector]}, "rules": stale_rules})
}

fn subject(kind: &str, name: &str, ns: Option<&str>) -> Value {
    let mut s = json!({"kind": kind, "name": name});
    if let Some(ns) = ns {
        s["namespace"] = json!(ns);
    }
    s
}

fn crb(name: &str, role_kind: &str, role: &str, subjects: Vec<Value>) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": {"name": name},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
           "subjects": subjects})
}

fn rb(ns: &str, name: &str, role_kind: &str, role: &str, subjects: Vec<Value>) -> Value {
    let mut b = crb(name, role_kind, role, subjects);
    b["kind"] = json!("RoleBinding");
    b["metadata"]["namespace"] = json!(ns);
    b
}

fn policy() -> Policy {
    let read = |group: &str, resources: &[&str]| json!([{"verbs": ["get", "list", "watch"], "apiGroups": [group], "resources": resources}]);
    let objects = vec![
        cluster_role("pod-reader", json!({}), read("", &["pods"])),
        cluster_role(
            "secret-one",
            json!({}),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["db"]}]),
        ),
        cluster_role(
            "logs",
            json!({}),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}]),
        ),
        cluster_role(
            "any-status",
            json!({}),
            json!([{"verbs": ["get", "update"], "apiGroups": ["*"], "resources": ["*/status"]}]),
        ),
        cluster_role(
            "apps-all",
            json!({}),
            json!([{"verbs": ["*"], "apiGroups": ["apps"], "resources": ["*"]}]),
        ),
        cluster_role(
            "health",
            json!({}),
            json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*"]}]),
        ),
        cluster_role(
            "core-star",
            json!({}),
            json!([{"verbs": ["*"], "apiGroups": [""], "resources": ["*"]}]),
        ),
        // Aggregation: super-mon ⊃ monitoring ⊃ {mon-a, mon-b}; monitoring's stored rules are stale.
        aggregated(
            "monitoring",
            json!({"example.com/aggregate-to-super": "true"}),
            json!({"matchLabels": {"example.com/aggregate-to-monitoring": "true"}}),
            json!([{"verbs": ["delete"], "apiGroups": [""], "resources": ["secrets"]}]),
        ),
        cluster_role(
            "mon-a",
            json!({"example.com/aggregate-to-monitoring": "true"}),
            read("", &["services"]),
        ),
        cluster_role(
            "mon-b",
            json!({"example.com/aggregate-to-monitoring": "true"}),
            read("monitoring.coreos.com", &["prometheuses"]),
        ),
        aggregated(
            "super-mon",
            json!({}),
            json!({"matchExpressions": [{"key": "example.com/aggregate-to-super", "operator": "Exists"}]}),
            json!([]),
        ),
        // A cycle of aggregated roles with one leaf.
        aggregated(
            "cyclic-a",
            json!({"cycle": "b"}),
            json!({"matchLabels": {"cycle": "a"}}),
            json!([]),
        ),
        aggregated(
            "cyclic-b",
            json!({"cycle": "a"}),
            json!({"matchLabels": {"cycle": "b"}}),
            json!([]),
        ),
        cluster_role("cyc-leaf", json!({"cycle": "a"}), read("", &["configmaps"])),
        crb(
            "alice-pods",
            "ClusterRole",
            "pod-reader",
            vec![subject("User", "alice", None)],
        ),
        crb(
            "devs-apps",
            "ClusterRole",
            "apps-all",
            vec![subject("Group", "devs", None)],
        ),
        crb(
            "health-all",
            "ClusterRole",
            "health",
            vec![subject("Group", "system:authenticated", None)],
        ),
        crb(
            "sa-cluster",
            "ClusterRole",
            "logs",
            vec![
                subject("User", "nobody", None),
                subject("ServiceAccount", "ci", Some("build")),
            ],
        ),
        crb(
            "sa-no-ns",
            "ClusterRole",
            "core-star",
            vec![subject("ServiceAccount", "ghost", None)],
        ),
        crb(
            "gina-star",
            "ClusterRole",
            "core-star",
            vec![subject("User", "gina", None)],
        ),
        crb(
            "crb-to-role",
            "Role",
            "cm-editor",
            vec![subject("User", "dave", None)],
        ),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "cm-editor", "namespace": "ns1"},
               "rules": [{"verbs": ["create", "update"], "apiGroups": [""], "resources": ["configmaps"]}]}),
        rb(
            "ns1",
            "bob-cm",
            "Role",
            "cm-editor",
            vec![subject("User", "bob", None)],
        ),
        rb(
            "ns1",
            "bob-secret",
            "ClusterRole",
            "secret-one",
            vec![subject("User", "bob", None)],
        ),
        rb(
            "ns1",
            "local-sa",
            "ClusterRole",
            "any-status",
            vec![subject("ServiceAccount", "deployer", None)],
        ),
        rb(
            "ns1",
            "frank-pods",
            "ClusterRole",
            "pod-reader",
            vec![subject("User", "frank", None)],
        ),
        rb(
            "ns2",
            "broken",
            "ClusterRole",
            "missing",
            vec![subject("User", "carol", None)],
        ),
        rb(
            "ns2",
            "broken-role",
            "Role",
            "nope",
            vec![subject("User", "carol", None)],
        ),
        rb(
            "ns3",
            "erin-super",
            "ClusterRole",
            "super-mon",
            vec![subject("User", "erin", None)],
        ),
        rb(
            "ns4",
            "hank-cycle",
            "ClusterRole",
            "cyclic-a",
            vec![subject("User", "hank", None)],
        ),
    ];
    Policy::from_objects(&objects).unwrap()
}

/// Whole-policy decisions: (what, request, Ok(allow reason) or Err(deny reason)).
#[test]
fn authorization_table() {
    let p = policy();
    let alice = user("alice", &[]);
    let dev = user("dana", &["devs"]);
    let bob = user("bob", &[]);
    let carol = user("carol", &[]);
    let erin = user("erin", &[]);
    let frank = user("frank", &[]);
    let ns = |a: Attributes, n: &str| a.in_namespace(n);
    let crb_reason = |b: &str, r: &str, s: &str| {
        Ok(format!(
            "RBAC: allowed by ClusterRoleBinding \"{b}\" of ClusterRole \"{r}\" to {s}"
        ))
    };
    let rb_reason = |b: &str, k: &str, r: &str, s: &str| {
        Ok(format!(
            "RBAC: allowed by RoleBinding \"{b}\" of {k} \"{r}\" to {s}"
        ))
    };
    let deny = |r: &str| Err(r.to_string());
    let cases: Vec<(&str, Attributes, Result<String, String>)> = vec![
        ("masters bypass RBAC", Attributes::resource(user("root", &["system:masters"]), "delete", "", "nodes"), Ok("allowed by membership in group \"system:masters\"".into())),
        ("ClusterRoleBinding to a user, namespaced request", ns(get(&alice, "", "pods"), "ns1"), crb_reason("alice-pods", "pod-reader", "User \"alice\"")),
        ("ClusterRoleBinding to a user, cluster-wide list", Attributes::resource(alice.clone(), "list", "", "pods"), crb_reason("alice-pods", "pod-reader", "User \"alice\"")),
        ("verb not granted", ns(Attributes::resource(alice.clone(), "delete", "", "pods"), "ns1"), deny("")),
        ("subresource not granted by its parent", ns(get(&alice, "", "pods").subresource("log"), "ns1"), deny("")),
        ("ClusterRoleBinding to a group", ns(Attributes::resource(dev.clone(), "create", "apps", "deployments"), "ns9"), crb_reason("devs-apps", "apps-all", "Group \"devs\"")),
        ("group grant limited to its API group", ns(Attributes::resource(dev.clone(), "create", "", "configmaps"), "ns9"), deny("")),
        ("non-resource URL for system:authenticated", Attributes::non_resource(alice.clone(), "get", "/healthz"), crb_reason("health-all", "health", "Group \"system:authenticated\"")),
        ("non-resource URL by prefix", Attributes::non_resource(alice.clone(), "get", "/apis/apps/v1"), crb_reason("health-all", "health", "Group \"system:authenticated\"")),
        ("non-resource URL not listed", Attributes::non_resource(alice.clone(), "get", "/metrics"), deny("")),
        ("anonymous is not system:authenticated", Attributes::non_resource(UserInfo::anonymous(), "get", "/healthz"), deny("")),
        ("service account subject with namespace", ns(get(&sa("build", "ci"), "", "pods").subresource("log"), "ns1"), crb_reason("sa-cluster", "logs", "ServiceAccount \"ci/build\"")),
        ("service account of the same name elsewhere", ns(get(&sa("other", "ci"), "", "pods").subresource("log"), "ns1"), deny("")),
        ("ClusterRoleBinding service account without namespace matches nobody", get(&sa("default", "ghost"), "", "pods"), deny("")),
        ("resources * covers subresources", ns(get(&user("gina", &[]), "", "pods").subresource("exec"), "ns1"), crb_reason("gina-star", "core-star", "User \"gina\"")),
        ("RoleBinding to a Role", ns(Attributes::resource(bob.clone(), "create", "", "configmaps"), "ns1"), rb_reason("bob-cm/ns1", "Role", "cm-editor", "User \"bob\"")),
        ("RoleBinding grants nothing in other namespaces", ns(Attributes::resource(bob.clone(), "create", "", "configmaps"), "ns2"), deny("")),
        ("RoleBinding grants nothing cluster-wide", Attributes::resource(bob.clone(), "create", "", "configmaps"), deny("")),
        ("RoleBinding to a ClusterRole with resourceNames", ns(get(&bob, "", "secrets").named("db"), "ns1"), rb_reason("bob-secret/ns1", "ClusterRole", "secret-one", "User \"bob\"")),
        ("resourceNames: other name", ns(get(&bob, "", "secrets").named("api"), "ns1"), deny("")),
        ("resourceNames: unnamed list", ns(Attributes::resource(bob.clone(), "list", "", "secrets"), "ns1"), deny("")),
        ("RoleBinding service account defaults to the binding's namespace", ns(Attributes::resource(sa("ns1", "deployer"), "update", "apps", "deployments").subresource("status"), "ns1"), rb_reason("local-sa/ns1", "ClusterRole", "any-status", "ServiceAccount \"deployer/ns1\"")),
        ("*/status does not cover the parent", ns(Attributes::resource(sa("ns1", "deployer"), "update", "apps", "deployments"), "ns1"), deny("")),
        ("same-named service account from another namespace", ns(Attributes::resource(sa("ns2", "deployer"), "update", "apps", "deployments").subresource("status"), "ns1"), deny("")),
        ("RoleBinding→ClusterRole applies in its namespace", ns(Attributes::resource(frank.clone(), "list", "", "pods"), "ns1"), rb_reason("frank-pods/ns1", "ClusterRole", "pod-reader", "User \"frank\"")),
        ("RoleBinding→ClusterRole not in another namespace", ns(Attributes::resource(frank.clone(), "list", "", "pods"), "ns2"), deny("")),
        ("RoleBinding→ClusterRole not cluster-wide", Attributes::resource(frank.clone(), "list", "", "pods"), deny("")),
        ("missing roles are reported", ns(get(&carol, "", "pods"), "ns2"), deny("RBAC: [clusterrole.rbac.authorization.k8s.io \"missing\" not found, role.rbac.authorization.k8s.io \"nope\" not found]")),
        ("ClusterRoleBinding cannot use a Role", get(&user("dave", &[]), "", "configmaps"), deny("RBAC: role.rbac.authorization.k8s.io \"cm-editor\" not found")),
        ("nested aggregation, first level", ns(get(&erin, "", "services"), "ns3"), rb_reason("erin-super/ns3", "ClusterRole", "super-mon", "User \"erin\"")),
        ("nested aggregation, other leaf", ns(get(&erin, "monitoring.coreos.com", "prometheuses"), "ns3"), rb_reason("erin-super/ns3", "ClusterRole", "super-mon", "User \"erin\"")),
        ("stale rules of an aggregated role are ignored", ns(Attributes::resource(erin.clone(), "delete", "", "secrets"), "ns3"), deny("")),
        ("aggregated grant is still namespaced", ns(get(&erin, "", "services"), "ns1"), deny("")),
        ("aggregation cycle terminates", ns(get(&user("hank", &[]), "", "configmaps"), "ns4"), rb_reason("hank-cycle/ns4", "ClusterRole", "cyclic-a", "User \"hank\"")),
        ("aggregation cycle grants only the leaf", ns(get(&user("hank", &[]), "", "secrets"), "ns4"), deny("")),
    ];
    for (what, attrs, want) in cases {
        let d = authorize(&attrs, &p);
        let got = if d.is_allowed() {
            Ok(d.reason().to_string())
        } else {
            Err(d.reason().to_string())
        };
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn forbidden_messages() {
    let alice = user("alice", &[]);
    let cases: Vec<(Attributes, &str, &str, &str)> = vec![
        (
            Attributes::resource(alice.clone(), "list", "", "secrets").in_namespace("ns1"),
            "",
            "User \"alice\" cannot list resource \"secrets\" in API group \"\" in the namespace \"ns1\"",
            "secrets is forbidden: User \"alice\" cannot list resource \"secrets\" in API group \"\" in the namespace \"ns1\"",
        ),
        (
            Attributes::resource(alice.clone(), "update", "apps", "deployments").subresource("scale").named("web"),
            "RBAC: clusterrole.rbac.authorization.k8s.io \"x\" not found",
            "User \"alice\" cannot update resource \"deployments/scale\" in API group \"apps\" at the cluster scope",
            "deployments.apps \"web\" is forbidden: User \"alice\" cannot update resource \"deployments/scale\" in API group \"apps\" at the cluster scope: RBAC: clusterrole.rbac.authorization.k8s.io \"x\" not found",
        ),
        (
            Attributes::non_resource(alice.clone(), "get", "/metrics"),
            "",
            "User \"alice\" cannot get path \"/metrics\"",
            "forbidden: User \"alice\" cannot get path \"/metrics\"",
        ),
    ];
    for (attrs, reason, short, full) in cases {
        assert_eq!(forbidden_message(&attrs), short);
        assert_eq!(forbidden_status_message(&attrs, reason), full);
    }
}

#[test]
fn rules_for_lists_effective_rules() {
    let p = policy();
    let (rules, errors) = rules_for(&user("bob", &[]), "ns1", &p);
    let resources: Vec<String> = rules
        .iter()
        .flat_map(|r| {
            r.resources
                .clone()
                .unwrap_or_default()
                .into_iter()
                .chain(r.non_resource_urls.clone().unwrap_or_default())
        })
        .collect();
    assert_eq!(resources, ["/healthz", "/apis/*", "configmaps", "secrets"]);
    assert!(errors.is_empty());
    let (_, errors) = rules_for(&user("carol", &[]), "ns2", &p);
    assert_eq!(errors.len(), 2);
    let (rules, _) = rules_for(&user("root", &["system:masters"]), "", &p);
    assert_eq!(rules.len(), 2);
}

#[test]
fn policy_updates_and_rejects_bad_objects() {
    let mut p = policy();
    let bob_create =
        Attributes::resource(user("bob", &[]), "create", "", "configmaps").in_namespace("ns1");
    assert!(authorize(&bob_create, &p).is_allowed());
    assert!(p.remove("RoleBinding", "ns1", "bob-cm"));
    assert!(!p.remove("RoleBinding", "ns1", "bob-cm"));
    assert!(!authorize(&bob_create, &p).is_allowed());
    // A binding given other subjects: its former subjects lose the grant (the subject index
    // forgets them), the new ones gain it.
    let alice_pods = get(&user("alice", &[]), "", "pods");
    let zed_pods = get(&user("zed", &["devs"]), "", "pods");
    assert!(authorize(&alice_pods, &p).is_allowed());
    p.apply(&crb(
        "alice-pods",
        "ClusterRole",
        "pod-reader",
        vec![subject("Group", "devs", None)],
    ))
    .unwrap();
    assert!(!authorize(&alice_pods, &p).is_allowed());
    assert!(authorize(&zed_pods, &p).is_allowed());
    assert!(p.remove("ClusterRoleBinding", "", "alice-pods"));
    assert!(!authorize(&zed_pods, &p).is_allowed());
    let cases: Vec<(Value, &str)> = vec![
        (json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}), "apiVersion \"v1\" kind \"ConfigMap\" is not an rbac.authorization.k8s.io/v1 object"),
        (json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "x"}}), "Role has no metadata.name, or no metadata.namespace where one is required"),
        (json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "x"}, "rules": 5}), "ClusterRole \"x\" is not a valid rbac.authorization.k8s.io/v1 ClusterRole: invalid type: integer `5`, expected a sequence"),
    ];
    for (obj, want) in cases {
        assert_eq!(p.apply(&obj).unwrap_err().to_string(), want);
    }
}
