use http::Method;

use super::policy::{Level, Policy, Stage};
use crate::auth::UserInfo;
use crate::request::RequestInfo;

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    users: ["system:kube-proxy"]
  - level: None
    nonResourceURLs: ["/healthz*", "/version"]
  - level: Metadata
    resources: [{group: "", resources: ["secrets", "configmaps"]}]
  - level: RequestResponse
    verbs: [create, update, patch, delete]
    resources: [{group: apps, resources: ["deployments", "deployments/scale"]}]
  - level: Request
    userGroups: ["system:serviceaccounts"]
    namespaces: [kube-system]
  - level: Metadata
    resources: [{group: "", resources: ["pods/*"], resourceNames: [web]}]
    omitStages: [ResponseStarted]
    omitManagedFields: true
  - level: Metadata
"#;

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    }
}

fn info(method: Method, path: &str) -> RequestInfo {
    RequestInfo::parse(&method, path, false)
}

#[test]
fn the_first_matching_rule_gives_the_level() {
    let p = Policy::parse(POLICY).unwrap();
    let alice = user("alice", &["system:authenticated"]);
    let level = |u: &UserInfo, m: Method, path: &str| p.judge(u, &info(m, path)).level;
    assert_eq!(
        level(
            &user("system:kube-proxy", &[]),
            Method::GET,
            "/api/v1/secrets"
        ),
        Level::None
    );
    assert_eq!(level(&alice, Method::GET, "/healthz/etcd"), Level::None);
    assert_eq!(level(&alice, Method::GET, "/version"), Level::None);
    assert_eq!(level(&alice, Method::GET, "/versions"), Level::Metadata);
    assert_eq!(
        level(&alice, Method::GET, "/api/v1/namespaces/a/secrets/db"),
        Level::Metadata
    );
    assert_eq!(
        level(
            &alice,
            Method::POST,
            "/apis/apps/v1/namespaces/a/deployments"
        ),
        Level::RequestResponse
    );
    assert_eq!(
        level(
            &alice,
            Method::PUT,
            "/apis/apps/v1/namespaces/a/deployments/web/scale"
        ),
        Level::RequestResponse
    );
    // Reads of deployments fall through to the catch-all.
    assert_eq!(
        level(
            &alice,
            Method::GET,
            "/apis/apps/v1/namespaces/a/deployments"
        ),
        Level::Metadata
    );
    let sa = user(
        "system:serviceaccount:kube-system:x",
        &["system:serviceaccounts"],
    );
    assert_eq!(
        level(&sa, Method::GET, "/api/v1/namespaces/kube-system/pods"),
        Level::Request
    );
    assert_eq!(
        level(&sa, Method::GET, "/api/v1/namespaces/default/pods"),
        Level::Metadata
    );
}

#[test]
fn subresource_patterns_and_names_and_stages() {
    let p = Policy::parse(POLICY).unwrap();
    let alice = user("alice", &[]);
    let web_log = p.judge(
        &alice,
        &info(Method::GET, "/api/v1/namespaces/a/pods/web/log"),
    );
    assert_eq!(web_log.level, Level::Metadata);
    assert!(web_log.omit_managed_fields);
    assert!(web_log.omit_stages.contains(&Stage::ResponseStarted));
    assert!(web_log.omit_stages.contains(&Stage::RequestReceived));
    let other = p.judge(
        &alice,
        &info(Method::GET, "/api/v1/namespaces/a/pods/db/log"),
    );
    assert!(!other.omit_managed_fields, "resourceNames limit the rule");
}

#[test]
fn no_rule_is_none_and_bad_policies_say_why() {
    let empty = Policy::parse("apiVersion: audit.k8s.io/v1\nkind: Policy\n").unwrap();
    assert_eq!(
        empty
            .judge(&user("a", &[]), &info(Method::GET, "/api/v1/pods"))
            .level,
        Level::None
    );
    for (text, want) in [
        ("apiVersion: v1\nkind: ConfigMap\n", "expected Policy"),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Loud}]\n",
            "unknown variant",
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [\"/a*b\"]}]\n",
            "only allowed at the end",
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: None, nonResourceURLs: [\"/a\"], namespaces: [x]}]\n",
            "cannot be mixed",
        ),
    ] {
        let err = Policy::parse(text).unwrap_err();
        assert!(err.contains(want), "{err} lacks {want}");
    }
}
