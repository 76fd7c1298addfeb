//! RBAC grants only what the granter holds.
//!
//! The hole: an account bound to `admin` in a namespace could create a RoleBinding to
//! `cluster-admin` (201), or a Role allowing everything. As kube-apiserver: writing a Role or
//! ClusterRole needs every rule it grants (held where it applies: the Role's namespace, or the
//! cluster) or `escalate` on it; writing a binding needs the bound role's rules in the
//! binding's namespace, or `bind` on that role (`resourceNames` honoured); an `aggregationRule`
//! needs cluster-admin. Every write path counts: create, update, merge and JSON patches, and
//! server-side apply. The hub's own identity (`system:masters`) is never limited.

use serde_json::{json, Value};

use super::{account, admin_apply, bind, Caller, JSON_PATCH, MERGE};
use crate::common::Hub;

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";
const NOT_HELD: &str = "is attempting to grant RBAC permissions not currently held";

fn binding(ns: &str, name: &str, kind: &str, role: &str, sa_ns: &str, sa: &str) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": name, "namespace": ns},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": sa_ns}]})
}

fn role(ns: &str, name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": name, "namespace": ns}, "rules": rules})
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": name}, "rules": rules})
}

fn everything() -> Value {
    json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}])
}

fn configmap_reader() -> Value {
    json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}])
}

/// A 403 saying the writer lacks what it grants.
fn refused(what: &str, r: &super::Reply) {
    assert_eq!(
        (r.code, r.reason()),
        (403, "Forbidden"),
        "{what}: {:?}",
        r.body
    );
    assert!(r.message().contains(NOT_HELD), "{what}: {}", r.message());
}

fn created(what: &str, r: &super::Reply) {
    assert_eq!(r.code, 201, "{what}: {:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_writes_grant_only_what_the_writer_holds() {
    let hub = Hub::start();
    for ns in ["team", "side"] {
        hub.ok(&["create", "namespace", ns]);
    }
    let admin = Caller::new(&hub, None).await;
    created(
        "wide",
        &admin
            .post(
                &format!("{RBAC}/clusterroles"),
                &cluster_role("wide", everything()),
            )
            .await,
    );
    // `lead` administers `team`, and may do everything in `side` only.
    let lead_token = account(&hub, "team", "lead", "clusterrole:admin");
    bind(
        &hub,
        "side",
        "lead-side",
        "team",
        "lead",
        "clusterrole:wide",
    );
    let lead = Caller::new(&hub, Some(&lead_token)).await;
    let team_bindings = format!("{RBAC}/namespaces/team/rolebindings");
    let team_roles = format!("{RBAC}/namespaces/team/roles");

    // Binding cluster-admin: refused with kube-apiserver's account of what is missing.
    let r = lead
        .post(
            &team_bindings,
            &binding(
                "team",
                "grab",
                "ClusterRole",
                "cluster-admin",
                "team",
                "lead",
            ),
        )
        .await;
    refused("bind cluster-admin", &r);
    assert_eq!(
        r.message(),
        "rolebindings.rbac.authorization.k8s.io \"grab\" is forbidden: user \
         \"system:serviceaccount:team:lead\" (groups=[\"system:serviceaccounts\" \
         \"system:serviceaccounts:team\" \"system:authenticated\"]) is attempting to grant RBAC \
         permissions not currently held:\n{APIGroups:[\"*\"], Resources:[\"*\"], \
         Verbs:[\"*\"]}\n{NonResourceURLs:[\"*\"], Verbs:[\"*\"]}"
    );
    assert_eq!(
        admin.get(&format!("{team_bindings}/grab")).await.code,
        404,
        "nothing stored"
    );
    // A binding's rules count in the binding's namespace only.
    let r = lead
        .post(
            &team_bindings,
            &binding("team", "w", "ClusterRole", "wide", "team", "lead"),
        )
        .await;
    refused("bind wide in team (held in side only)", &r);
    let side_bindings = format!("{RBAC}/namespaces/side/rolebindings");
    let r = lead
        .post(
            &side_bindings,
            &binding("side", "w", "ClusterRole", "wide", "team", "lead"),
        )
        .await;
    created("bind wide in side", &r);
    let r = lead
        .post(
            &side_bindings,
            &binding("side", "ca", "ClusterRole", "cluster-admin", "team", "lead"),
        )
        .await;
    created(
        "`*` in side includes `bind`: any role may be bound there",
        &r,
    );
    // Roles the writer holds: aggregated ClusterRoles, and its own Roles.
    for (name, kind, target) in [("e", "ClusterRole", "edit"), ("v", "ClusterRole", "view")] {
        let r = lead
            .post(
                &team_bindings,
                &binding("team", name, kind, target, "team", "lead"),
            )
            .await;
        created(&format!("bind {target}"), &r);
    }
    let r = lead
        .post(&team_roles, &role("team", "reader", configmap_reader()))
        .await;
    created("a Role within admin", &r);
    let r = lead
        .post(
            &team_bindings,
            &binding("team", "r", "Role", "reader", "team", "lead"),
        )
        .await;
    created("bind reader", &r);
    let r = lead
        .post(
            &team_bindings,
            &binding("team", "m", "Role", "missing", "team", "lead"),
        )
        .await;
    assert_eq!((r.code, r.reason()), (404, "NotFound"), "{:?}", r.body);

    // Roles granting more than the writer holds, on every write path.
    let reader = format!("{team_roles}/reader");
    let mut wider = role("team", "reader", everything());
    let attempts = [
        (
            "create",
            lead.post(&team_roles, &role("team", "god", everything()))
                .await,
        ),
        ("update", lead.put(&reader, &wider).await),
        (
            "merge patch",
            lead.patch(&reader, MERGE, &json!({"rules": everything()}))
                .await,
        ),
        (
            "JSON patch",
            lead.patch(
                &reader,
                JSON_PATCH,
                &json!([{"op": "add", "path": "/rules/-", "value": everything()[0]}]),
            )
            .await,
        ),
        ("apply (update)", lead.apply(&reader, &wider).await),
        (
            "apply (create)",
            lead.apply(
                &format!("{team_roles}/god"),
                &role("team", "god", everything()),
            )
            .await,
        ),
        (
            "apply a binding",
            lead.apply(
                &format!("{team_bindings}/grab"),
                &binding(
                    "team",
                    "grab",
                    "ClusterRole",
                    "cluster-admin",
                    "team",
                    "lead",
                ),
            )
            .await,
        ),
    ];
    for (what, r) in &attempts {
        refused(what, r);
    }
    let stored = admin.get(&reader).await.body;
    assert_eq!(stored["rules"], configmap_reader(), "reader unchanged");
    assert_eq!(admin.get(&format!("{team_roles}/god")).await.code, 404);
    // A change that grants nothing new is fine.
    wider["rules"] = configmap_reader();
    wider["metadata"]["labels"] = json!({"tidy": "yes"});
    let r = lead.put(&reader, &wider).await;
    assert_eq!(r.code, 200, "relabel: {:?}", r.body);

    // `escalate` on roles lets a Role grant more; binding it still needs the rules or `bind`.
    admin_apply(
        &hub,
        &role(
            "team",
            "may-escalate",
            json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"],
                    "verbs": ["escalate"]}]),
        )
        .to_string(),
    );
    bind(
        &hub,
        "team",
        "lead-escalate",
        "team",
        "lead",
        "role:may-escalate",
    );
    let r = lead
        .post(&team_roles, &role("team", "god", everything()))
        .await;
    created("a Role beyond admin, with escalate", &r);
    let r = lead
        .post(
            &team_bindings,
            &binding("team", "g", "Role", "god", "team", "lead"),
        )
        .await;
    refused("bind god without bind", &r);

    cluster_scope(&hub, &admin).await;

    // `bind` on one ClusterRole by name: that one may be bound, no other.
    admin_apply(
        &hub,
        &role(
            "team",
            "may-bind-wide",
            json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
                    "resourceNames": ["wide"], "verbs": ["bind"]}]),
        )
        .to_string(),
    );
    bind(
        &hub,
        "team",
        "lead-bind",
        "team",
        "lead",
        "role:may-bind-wide",
    );
    let r = lead
        .post(
            &team_bindings,
            &binding(
                "team",
                "grab",
                "ClusterRole",
                "cluster-admin",
                "team",
                "lead",
            ),
        )
        .await;
    refused("bind cluster-admin, with bind on wide only", &r);
    let r = lead
        .post(
            &team_bindings,
            &binding("team", "w", "ClusterRole", "wide", "team", "lead"),
        )
        .await;
    created("bind wide, with bind on it", &r);
}

/// ClusterRoles and ClusterRoleBindings: rules held cluster-wide, and aggregation reserved to
/// cluster admins — who still use it freely.
async fn cluster_scope(hub: &Hub, admin: &Caller) {
    created(
        "role-manager",
        &admin
            .post(
                &format!("{RBAC}/clusterroles"),
                &cluster_role(
                    "role-manager",
                    json!([{"apiGroups": ["rbac.authorization.k8s.io"],
                            "resources": ["clusterroles", "clusterrolebindings"],
                            // Not `*`, which includes `escalate` and `bind`.
                            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]}]),
                ),
            )
            .await,
    );
    hub.ok(&["create", "serviceaccount", "crm", "-n", "team"]);
    hub.ok(&[
        "create",
        "clusterrolebinding",
        "crm",
        "--clusterrole=role-manager",
        "--serviceaccount=team:crm",
    ]);
    let crm = Caller::new(hub, Some(&super::token(hub, "team", "crm"))).await;
    let roles = format!("{RBAC}/clusterroles");
    let read_roles = json!([{"apiGroups": ["rbac.authorization.k8s.io"],
        "resources": ["clusterroles"], "verbs": ["get", "list"]}]);
    created(
        "a ClusterRole within role-manager",
        &crm.post(&roles, &cluster_role("role-reader", read_roles.clone()))
            .await,
    );
    let nodes = json!([{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]);
    refused(
        "a ClusterRole beyond role-manager",
        &crm.post(&roles, &cluster_role("nodes", nodes.clone()))
            .await,
    );
    let mut widened = cluster_role("role-reader", nodes);
    refused(
        "widening a ClusterRole",
        &crm.put(&format!("{roles}/role-reader"), &widened).await,
    );
    let mut aggregated = cluster_role("collector", json!([]));
    aggregated["aggregationRule"] = json!({"clusterRoleSelectors": [
        {"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}]});
    let r = crm.post(&roles, &aggregated).await;
    assert_eq!((r.code, r.reason()), (403, "Forbidden"), "{:?}", r.body);
    assert!(
        r.message()
            .ends_with("must have cluster-admin privileges to use the aggregationRule"),
        "{}",
        r.message()
    );
    widened["rules"] = read_roles;
    widened["aggregationRule"] = aggregated["aggregationRule"].clone();
    let r = crm.put(&format!("{roles}/role-reader"), &widened).await;
    assert_eq!((r.code, r.reason()), (403, "Forbidden"), "{:?}", r.body);
    let crbs = format!("{RBAC}/clusterrolebindings");
    let crb = |role: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": format!("crm-{role}")},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": "crm", "namespace": "team"}]})
    };
    refused(
        "a ClusterRoleBinding to cluster-admin",
        &crm.post(&crbs, &crb("cluster-admin")).await,
    );
    created(
        "a ClusterRoleBinding within role-manager",
        &crm.post(&crbs, &crb("role-reader")).await,
    );

    // The admin aggregates as it likes, and an aggregated role binds by its aggregated rules.
    let mut part = cluster_role("agg-part", configmap_reader());
    part["metadata"]["labels"] = json!({"authz.example.com/agg": "true"});
    created("agg-part", &admin.post(&roles, &part).await);
    let mut agg = cluster_role("agg", json!([]));
    agg["aggregationRule"] =
        json!({"clusterRoleSelectors": [{"matchLabels": {"authz.example.com/agg": "true"}}]});
    created(
        "an aggregated ClusterRole, by the admin",
        &admin.post(&roles, &agg).await,
    );
    let lead = Caller::new(hub, Some(&super::token(hub, "team", "lead"))).await;
    let r = lead
        .post(
            &format!("{RBAC}/namespaces/team/rolebindings"),
            &binding("team", "agg", "ClusterRole", "agg", "team", "lead"),
        )
        .await;
    created("bind an aggregated ClusterRole whose parts admin holds", &r);
}
