use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef};
use serde_json::{json, Value};

use super::*;
use crate::auth::rbac::Policy;

fn rules(v: Value) -> Vec<PolicyRule> {
    serde_json::from_value(v).unwrap()
}

fn shown(missing: Vec<PolicyRule>) -> Vec<String> {
    let mut s: Vec<String> = compact(missing).iter().map(compact_string).collect();
    s.sort();
    s
}

/// (what, held, granted, what is missing as kube-apiserver prints it)
#[test]
fn coverage_table() {
    let all = json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]);
    let cm_read =
        json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}]);
    let cases: Vec<(&str, Value, Value, Vec<&str>)> = vec![
        ("nothing granted", json!([]), json!([]), vec![]),
        ("the same rule", cm_read.clone(), cm_read.clone(), vec![]),
        (
            "a verb more",
            cm_read.clone(),
            json!([{"verbs": ["get", "list", "delete"], "apiGroups": [""], "resources": ["configmaps"]}]),
            vec![r#"{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}"#],
        ),
        (
            "verbs split over two held rules",
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]},
                   {"verbs": ["list"], "apiGroups": [""], "resources": ["configmaps"]}]),
            cm_read.clone(),
            vec![],
        ),
        (
            "* covers everything named",
            all.clone(),
            cm_read.clone(),
            vec![],
        ),
        (
            "a * granted is a * to hold",
            cm_read.clone(),
            all.clone(),
            vec![r#"{APIGroups:["*"], Resources:["*"], Verbs:["*"]}"#],
        ),
        (
            "the missing verbs of one resource are shown together",
            json!([]),
            cm_read.clone(),
            vec![r#"{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "list"]}"#],
        ),
        (
            "another group",
            cm_read.clone(),
            json!([{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["configmaps"]}]),
            vec![r#"{APIGroups:["apps"], Resources:["configmaps"], Verbs:["get"]}"#],
        ),
        (
            "a resource does not cover its subresources",
            json!([{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]}]),
            json!([{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments/scale"]}]),
            vec![r#"{APIGroups:["apps"], Resources:["deployments/scale"], Verbs:["get"]}"#],
        ),
        (
            "*/scale covers every scale",
            json!([{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["*/scale"]}]),
            json!([{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments/scale", "statefulsets/scale"]}]),
            vec![],
        ),
        (
            "held names cover those names",
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a", "b"]}]),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}]),
            vec![],
        ),
        (
            "held names do not cover other names",
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}]),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a", "c"]}]),
            vec![r#"{APIGroups:[""], Resources:["secrets"], ResourceNames:["c"], Verbs:["get"]}"#],
        ),
        (
            "held names do not cover every name",
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["a"]}]),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}]),
            vec![r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}"#],
        ),
        (
            "no held names cover any name",
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}]),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"], "resourceNames": ["x"]}]),
            vec![],
        ),
        (
            "URLs by a trailing *",
            json!([{"verbs": ["get"], "nonResourceURLs": ["/apis/*", "/healthz"]}]),
            json!([{"verbs": ["get"], "nonResourceURLs": ["/apis/apps", "/healthz"]}]),
            vec![],
        ),
        (
            "URLs not held",
            json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]),
            json!([{"verbs": ["get", "post"], "nonResourceURLs": ["/healthz", "/metrics"]}]),
            vec![
                r#"{NonResourceURLs:["/healthz"], Verbs:["post"]}"#,
                r#"{NonResourceURLs:["/metrics"], Verbs:["get"]}"#,
                r#"{NonResourceURLs:["/metrics"], Verbs:["post"]}"#,
            ],
        ),
        (
            "resource rules never cover URLs",
            all.clone(),
            json!([{"verbs": ["*"], "nonResourceURLs": ["*"]}]),
            vec![r#"{NonResourceURLs:["*"], Verbs:["*"]}"#],
        ),
        (
            "URL rules never cover resources",
            json!([{"verbs": ["*"], "nonResourceURLs": ["*"]}]),
            cm_read.clone(),
            vec![r#"{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "list"]}"#],
        ),
        (
            "special verbs are verbs",
            cm_read.clone(),
            json!([{"verbs": ["escalate", "bind"], "apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"]}]),
            vec![
                r#"{APIGroups:["rbac.authorization.k8s.io"], Resources:["roles"], Verbs:["escalate" "bind"]}"#,
            ],
        ),
    ];
    for (what, held, granted, want) in cases {
        let got = shown(uncovered(&rules(held), &rules(granted)));
        assert_eq!(got, want, "{what}");
    }
}

#[test]
fn rules_break_down_into_atoms() {
    let r = rules(json!([{"verbs": ["get", "list"], "apiGroups": ["", "apps"],
        "resources": ["a"], "resourceNames": ["x", "y"], "nonResourceURLs": ["/u"]}]));
    let atoms: Vec<String> = breakdown(&r[0]).iter().map(compact_string).collect();
    assert_eq!(
        atoms,
        [
            r#"{APIGroups:[""], Resources:["a"], ResourceNames:["x"], Verbs:["get"]}"#,
            r#"{APIGroups:[""], Resources:["a"], ResourceNames:["y"], Verbs:["get"]}"#,
            r#"{APIGroups:[""], Resources:["a"], ResourceNames:["x"], Verbs:["list"]}"#,
            r#"{APIGroups:[""], Resources:["a"], ResourceNames:["y"], Verbs:["list"]}"#,
            r#"{APIGroups:["apps"], Resources:["a"], ResourceNames:["x"], Verbs:["get"]}"#,
            r#"{APIGroups:["apps"], Resources:["a"], ResourceNames:["y"], Verbs:["get"]}"#,
            r#"{APIGroups:["apps"], Resources:["a"], ResourceNames:["x"], Verbs:["list"]}"#,
            r#"{APIGroups:["apps"], Resources:["a"], ResourceNames:["y"], Verbs:["list"]}"#,
            r#"{NonResourceURLs:["/u"], Verbs:["get"]}"#,
            r#"{NonResourceURLs:["/u"], Verbs:["list"]}"#,
        ]
    );
    let no_groups = rules(json!([{"verbs": ["get"], "resources": ["a"]}]));
    assert!(breakdown(&no_groups[0]).is_empty(), "nothing to grant");
}

fn policy() -> Policy {
    let rbac = "rbac.authorization.k8s.io/v1";
    Policy::from_objects([
        json!({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": "cm-read"},
            "rules": [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"]}]}),
        json!({"apiVersion": rbac, "kind": "ClusterRole",
            "metadata": {"name": "part", "labels": {"agg": "yes"}},
            "rules": [{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]}]}),
        json!({"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": "agg"},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"agg": "yes"}}]},
            "rules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]}),
        json!({"apiVersion": rbac, "kind": "Role", "metadata": {"name": "local", "namespace": "t"},
            "rules": [{"verbs": ["delete"], "apiGroups": [""], "resources": ["secrets"]}]}),
        json!({"apiVersion": rbac, "kind": "RoleBinding", "metadata": {"name": "b", "namespace": "t"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-read"},
            "subjects": [{"kind": "ServiceAccount", "name": "bot", "namespace": "t"}]}),
        json!({"apiVersion": rbac, "kind": "RoleBinding", "metadata": {"name": "ghost", "namespace": "t"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "gone"},
            "subjects": [{"kind": "ServiceAccount", "name": "bot", "namespace": "t"}]}),
    ])
    .unwrap()
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: "rbac.authorization.k8s.io".into(),
        kind: kind.into(),
        name: name.into(),
    }
}

#[test]
fn a_role_ref_grants_its_roles_rules() {
    let p = policy();
    let show = |r: Result<Vec<PolicyRule>, RoleRefError>| {
        r.map(|rules| rules.iter().map(compact_string).collect::<Vec<_>>())
    };
    assert_eq!(
        show(bound_rules(&p, &role_ref("Role", "local"), "t")),
        Ok(vec![
            r#"{APIGroups:[""], Resources:["secrets"], Verbs:["delete"]}"#.to_string()
        ])
    );
    // An aggregated ClusterRole grants what it aggregates, not its stored rules.
    assert_eq!(
        show(bound_rules(&p, &role_ref("ClusterRole", "agg"), "t")),
        Ok(vec![
            r#"{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}"#.to_string()
        ])
    );
    let missing = [
        (role_ref("Role", "local"), "other", "role"),
        (role_ref("ClusterRole", "nope"), "t", "clusterrole"),
    ];
    for (r, ns, resource) in missing {
        assert_eq!(
            bound_rules(&p, &r, ns),
            Err(RoleRefError::NotFound {
                resource,
                name: r.name.clone()
            })
        );
    }
    assert_eq!(
        bound_rules(&p, &role_ref("Group", "x"), "t"),
        Err(RoleRefError::UnsupportedKind("Group".into()))
    );
}

#[test]
fn refusals_say_what_is_missing_as_kube_apiserver_does() {
    let p = policy();
    let bot = UserInfo::service_account("t", "bot", "uid");
    let cm = rules(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}]));
    // Held in `t`, through a RoleBinding there; not in another namespace, nor cluster-wide.
    assert_eq!(confirm_no_escalation(&bot, "t", &cm, &p), Ok(()));
    for ns in ["other", ""] {
        let err = confirm_no_escalation(&bot, ns, &cm, &p).unwrap_err();
        assert!(
            err.starts_with(
                "user \"system:serviceaccount:t:bot\" (groups=[\"system:serviceaccounts\" \
                 \"system:serviceaccounts:t\" \"system:authenticated\"]) is attempting to grant \
                 RBAC permissions not currently held:\n{APIGroups:[\"\"], \
                 Resources:[\"configmaps\"], Verbs:[\"get\"]}"
            ),
            "{ns:?}: {err}"
        );
    }
    // Everything missing, sorted, with the resolution errors met on the way.
    let err = confirm_no_escalation(&bot, "t", &full_authority(), &p).unwrap_err();
    assert!(
        err.ends_with(
            "not currently held:\n{APIGroups:[\"*\"], Resources:[\"*\"], Verbs:[\"*\"]}\n\
             {NonResourceURLs:[\"*\"], Verbs:[\"*\"]}; resolution errors: \
             [role.rbac.authorization.k8s.io \"gone\" not found]"
        ),
        "{err}"
    );
    // system:masters holds everything.
    let root = UserInfo::authenticated("root", vec!["system:masters".into()]);
    assert_eq!(
        confirm_no_escalation(&root, "", &full_authority(), &p),
        Ok(())
    );
}
