use serde_json::json;

use crate::auth::bootstrap;
use crate::auth::rbac::{authorize, Attributes, Policy};
use crate::auth::user::UserInfo;

/// The defaults plus one user with each of admin/edit/view in namespace `team` via
/// RoleBindings, as `kubectl create rolebinding --clusterrole=…` would make.
fn policy() -> Policy {
    let mut objects = bootstrap::objects();
    for role in ["admin", "edit", "view"] {
        objects.push(json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": format!("{role}-binding"), "namespace": "team"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "User", "name": format!("{role}-user")}],
        }));
    }
    Policy::from_objects(&objects).unwrap()
}

#[test]
fn defaults_are_well_formed() {
    let objects = bootstrap::objects();
    assert_eq!(Policy::from_objects(&objects).unwrap().len(), objects.len());
    for o in &objects {
        assert_eq!(
            o["metadata"]["labels"]["kubernetes.io/bootstrapping"],
            "rbac-defaults"
        );
        assert_eq!(
            o["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"],
            "true"
        );
        assert!(
            !o["metadata"]["name"]
                .as_str()
                .unwrap()
                .starts_with("flotilla:"),
            "no placeholder roles"
        );
    }
    let roles = bootstrap::cluster_roles();
    let names: Vec<&str> = roles
        .iter()
        .filter_map(|r| r["metadata"]["name"].as_str())
        .collect();
    for want in [
        "cluster-admin",
        "admin",
        "edit",
        "view",
        "system:discovery",
        "system:basic-user",
        "system:public-info-viewer",
    ] {
        assert!(names.contains(&want), "missing {want}");
    }
}

/// (user, request, allowed?) against the default policy.
#[test]
fn default_policy_table() {
    let p = policy();
    let anon = UserInfo::anonymous();
    let alice = UserInfo::authenticated("alice", vec![]);
    let sa = UserInfo::service_account("team", "app", "u");
    let admin = UserInfo::authenticated("admin-user", vec![]);
    let edit = UserInfo::authenticated("edit-user", vec![]);
    let view = UserInfo::authenticated("view-user", vec![]);
    let masters = UserInfo::authenticated("ops", vec!["system:masters".into()]);
    let url = |u: &UserInfo, path: &str| Attributes::non_resource(u.clone(), "get", path);
    let res = |u: &UserInfo, verb: &str, group: &str, resource: &str| {
        Attributes::resource(u.clone(), verb, group, resource).in_namespace("team")
    };
    let cases: Vec<(&str, Attributes, bool)> = vec![
        ("anonymous may read /healthz", url(&anon, "/healthz"), true),
        ("anonymous may read /version", url(&anon, "/version"), true),
        (
            "anonymous may not discover APIs",
            url(&anon, "/apis"),
            false,
        ),
        (
            "anonymous may not list namespaces",
            Attributes::resource(anon.clone(), "list", "", "namespaces"),
            false,
        ),
        ("authenticated may discover /api", url(&alice, "/api"), true),
        (
            "authenticated may discover /apis/apps/v1",
            url(&alice, "/apis/apps/v1"),
            true,
        ),
        (
            "authenticated may read /openapi/v3",
            url(&alice, "/openapi/v3"),
            true,
        ),
        (
            "authenticated may not read /metrics",
            url(&alice, "/metrics"),
            false,
        ),
        (
            "monitoring group may read /metrics",
            url(
                &UserInfo::authenticated("prom", vec!["system:monitoring".into()]),
                "/metrics",
            ),
            true,
        ),
        (
            "authenticated may self-review",
            Attributes::resource(
                alice.clone(),
                "create",
                "authorization.k8s.io",
                "selfsubjectaccessreviews",
            ),
            true,
        ),
        (
            "authenticated may not read configmaps",
            res(&alice, "get", "", "configmaps"),
            false,
        ),
        (
            "service accounts may read the JWKS",
            url(&sa, "/openid/v1/jwks"),
            true,
        ),
        (
            "users may not read the JWKS",
            url(&alice, "/openid/v1/jwks"),
            false,
        ),
        (
            "view reads deployments",
            res(&view, "list", "apps", "deployments"),
            true,
        ),
        (
            "view reads deployment status",
            res(&view, "get", "apps", "deployments").subresource("status"),
            true,
        ),
        (
            "view reads events.k8s.io events",
            res(&view, "watch", "events.k8s.io", "events"),
            true,
        ),
        (
            "view may not read secrets",
            res(&view, "get", "", "secrets"),
            false,
        ),
        (
            "view may not write",
            res(&view, "create", "", "configmaps"),
            false,
        ),
        (
            "view is namespaced",
            Attributes::resource(view.clone(), "list", "apps", "deployments").in_namespace("other"),
            false,
        ),
        (
            "edit includes view",
            res(&edit, "list", "batch", "jobs"),
            true,
        ),
        (
            "edit writes deployments",
            res(&edit, "patch", "apps", "deployments"),
            true,
        ),
        (
            "edit scales deployments",
            res(&edit, "update", "apps", "deployments").subresource("scale"),
            true,
        ),
        ("edit reads secrets", res(&edit, "get", "", "secrets"), true),
        (
            "edit requests service account tokens",
            res(&edit, "create", "", "serviceaccounts").subresource("token"),
            true,
        ),
        (
            "edit may not manage roles",
            res(&edit, "create", "rbac.authorization.k8s.io", "rolebindings"),
            false,
        ),
        (
            "admin includes edit",
            res(&admin, "delete", "", "secrets"),
            true,
        ),
        (
            "admin includes view",
            res(&admin, "get", "", "namespaces").named("team"),
            true,
        ),
        (
            "admin manages rolebindings",
            res(
                &admin,
                "create",
                "rbac.authorization.k8s.io",
                "rolebindings",
            ),
            true,
        ),
        (
            "admin may not touch cluster roles",
            Attributes::resource(
                admin.clone(),
                "create",
                "rbac.authorization.k8s.io",
                "clusterroles",
            ),
            false,
        ),
        (
            "masters may do anything",
            Attributes::resource(
                masters,
                "delete",
                "apiextensions.k8s.io",
                "customresourcedefinitions",
            ),
            true,
        ),
    ];
    for (what, attrs, want) in cases {
        assert_eq!(authorize(&attrs, &p).is_allowed(), want, "{what}");
    }
}

#[test]
fn third_party_roles_aggregate_into_defaults() {
    let mut p = policy();
    let widgets = Attributes::resource(
        UserInfo::authenticated("view-user", vec![]),
        "list",
        "example.com",
        "widgets",
    )
    .in_namespace("team");
    assert!(!authorize(&widgets, &p).is_allowed());
    p.apply(&json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "widgets-view", "labels": {bootstrap::AGGREGATE_TO_VIEW: "true"}},
        "rules": [{"verbs": ["get", "list", "watch"], "apiGroups": ["example.com"], "resources": ["widgets"]}],
    }))
    .unwrap();
    assert!(authorize(&widgets, &p).is_allowed());
    let via_admin = Attributes {
        user: UserInfo::authenticated("admin-user", vec![]),
        ..widgets
    };
    assert!(
        authorize(&via_admin, &p).is_allowed(),
        "admin ⊃ edit ⊃ view"
    );
}

#[test]
fn the_dns_reader_reads_what_dns_answers_from_and_nothing_else() {
    let mut p = policy();
    p.apply(&json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "dns"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": bootstrap::DNS_READER},
        "subjects": [{"kind": "User", "name": "dns"}],
    }))
    .unwrap();
    let dns = UserInfo::authenticated("dns", vec![]);
    let may = |verb: &str, group: &str, resource: &str| {
        authorize(
            &Attributes::resource(dns.clone(), verb, group, resource),
            &p,
        )
        .is_allowed()
    };
    for (group, resource) in [
        ("cluster.flotilla.io", "clusters"),
        ("", "services"),
        ("work.flotilla.io", "resourcebindings"),
        ("networking.flotilla.io", "globalservices"),
        ("networking.flotilla.io", "healthreports"),
        ("multicluster.x-k8s.io", "serviceimports"),
        ("discovery.k8s.io", "endpointslices"),
    ] {
        for verb in ["get", "list", "watch"] {
            assert!(may(verb, group, resource), "{verb} {resource}");
        }
        assert!(!may("update", group, resource), "update {resource}");
    }
    assert!(!may("list", "", "secrets"));
    assert!(!may("list", "multicluster.x-k8s.io", "serviceexports"));
}
