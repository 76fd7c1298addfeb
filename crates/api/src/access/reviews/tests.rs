use std::sync::Arc;

use serde_json::{json, Value};

use super::*;
use crate::auth::Policy;
use crate::Api;

fn alice() -> UserInfo {
    UserInfo::authenticated("alice", vec!["devs".into()])
}

/// alice may list configmaps in `team`; the group `devs` may get `/healthz`.
fn policy() -> Policy {
    Policy::from_objects([
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
               "metadata": {"name": "cm", "namespace": "team"},
               "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["configmaps"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "cm", "namespace": "team"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm"},
               "subjects": [{"kind": "User", "name": "alice"}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "health"},
               "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "health"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "health"},
               "subjects": [{"kind": "Group", "name": "devs"},
                            {"kind": "Group", "name": "ghosts"}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "dangling", "namespace": "team"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "gone"},
               "subjects": [{"kind": "User", "name": "alice"}]}),
    ])
    .unwrap()
}

fn ask(review: Review, mut body: Value, ns: Option<&str>) -> Result<Value> {
    let attrs = subject::attributes(review, &mut body, &alice(), ns)?;
    Ok(subject::status(&authorize(&attrs, &policy())))
}

#[test]
fn access_reviews_answer_as_the_authorizer_decides() {
    let cm = |verb: &str, ns: &str| json!({"spec": {"resourceAttributes": {"verb": verb, "resource": "configmaps", "namespace": ns, "version": "v1"}}});
    let sar = |user: &str, groups: Value, attrs: Value| json!({"spec": {"user": user, "groups": groups, "resourceAttributes": attrs}});
    let cases: Vec<(Review, Value, Option<&str>, bool)> = vec![
        (Review::SelfSubjectAccess, cm("list", "team"), None, true),
        (Review::SelfSubjectAccess, cm("delete", "team"), None, false),
        (Review::SelfSubjectAccess, cm("list", "other"), None, false),
        (
            Review::SelfSubjectAccess,
            json!({"metadata": {"creationTimestamp": null}, "spec": {"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}}),
            None,
            true,
        ),
        (
            Review::SubjectAccess,
            sar(
                "alice",
                json!([]),
                json!({"verb": "list", "resource": "configmaps", "namespace": "team"}),
            ),
            None,
            true,
        ),
        // The spec's user as given: no system:authenticated added, groups count.
        (
            Review::SubjectAccess,
            sar("bob", json!(["ghosts"]), Value::Null),
            None,
            false,
        ),
        (
            Review::LocalSubjectAccess,
            sar(
                "alice",
                json!([]),
                json!({"verb": "list", "resource": "configmaps", "namespace": "team"}),
            ),
            Some("team"),
            true,
        ),
    ];
    for (review, body, ns, allowed) in cases {
        let mut body = body;
        if review == Review::SubjectAccess && body["spec"]["resourceAttributes"].is_null() {
            body["spec"]["nonResourceAttributes"] = json!({"verb": "get", "path": "/healthz"});
            body["spec"]
                .as_object_mut()
                .unwrap()
                .remove("resourceAttributes");
            // ghosts may get /healthz: the case is allowed after all.
            let status = ask(review, body, ns).unwrap();
            assert_eq!(status["allowed"], true, "{status}");
            continue;
        }
        let status = ask(review, body.clone(), ns).unwrap();
        assert_eq!(status["allowed"], allowed, "{review:?} {body}: {status}");
        assert!(
            status.get("denied").is_none(),
            "RBAC has no opinion, never denies"
        );
        if allowed {
            assert!(status["reason"]
                .as_str()
                .unwrap()
                .starts_with("RBAC: allowed by"));
        }
    }
}

#[test]
fn access_reviews_are_validated_in_kube_apiservers_words() {
    let causes = |e: ApiError| -> Vec<String> {
        let s = e.to_status();
        s["details"]["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                format!(
                    "{}: {}",
                    c["field"].as_str().unwrap(),
                    c["message"].as_str().unwrap()
                )
            })
            .collect()
    };
    let e = ask(Review::SelfSubjectAccess, json!({"spec": {}}), None).unwrap_err();
    assert_eq!(e.code, 422);
    assert_eq!(
        causes(e),
        ["spec.resourceAttributes: Invalid value: \"null\": exactly one of nonResourceAttributes or resourceAttributes must be specified"]
    );
    let e = ask(
        Review::SubjectAccess,
        json!({"metadata": {"name": "x"}, "spec": {"nonResourceAttributes": {"verb": "get", "path": "/"}}}),
        None,
    )
    .unwrap_err();
    assert_eq!(
        causes(e),
        [
            "spec.user: Invalid value: \"\": at least one of user or group must be specified",
            "metadata: Invalid value: \"\": must be empty",
        ]
    );
    // A local review asks about its own namespace only.
    let local = json!({"spec": {"user": "alice", "resourceAttributes": {"verb": "list", "resource": "configmaps", "namespace": "other"}}});
    let e = ask(Review::LocalSubjectAccess, local.clone(), Some("team")).unwrap_err();
    assert_eq!(e.code, 422);
    assert_eq!(
        causes(e),
        ["spec.resourceAttributes.namespace: Invalid value: \"other\": must match metadata.namespace"]
    );
    let mut elsewhere = local;
    elsewhere["metadata"] = json!({"namespace": "other"});
    let e = ask(Review::LocalSubjectAccess, elsewhere, Some("team")).unwrap_err();
    assert_eq!((e.code, e.reason), (400, "BadRequest"));
}

#[test]
fn rules_reviews_split_resource_and_url_rules() {
    let p = policy();
    let (rules, errors) = crate::auth::rbac::rules_for(&alice(), "team", &p);
    let review = subject::rules_review(Review::SelfSubjectRules, "team", &rules, &errors);
    assert_eq!(review["kind"], "SelfSubjectRulesReview");
    let status = &review["status"];
    assert_eq!(
        status["resourceRules"],
        json!([{"verbs": ["list"], "apiGroups": [""], "resources": ["configmaps"]}])
    );
    assert_eq!(
        status["nonResourceRules"],
        json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}])
    );
    // The binding to a missing role makes the answer incomplete, and says why.
    assert_eq!(status["incomplete"], true);
    assert!(
        status["evaluationError"].as_str().unwrap().contains("gone"),
        "{status}"
    );
    assert_eq!(
        subject::rules_namespace(&json!({"spec": {}}))
            .unwrap_err()
            .message,
        "no namespace on request"
    );
}

#[test]
fn self_subject_review_is_the_caller() {
    let now = chrono::DateTime::parse_from_rfc3339("2026-01-02T03:04:05Z")
        .unwrap()
        .into();
    let v = identity::self_subject(Review::SelfSubject, &alice(), now);
    assert_eq!(
        v,
        json!({"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
               "metadata": {"creationTimestamp": "2026-01-02T03:04:05Z"},
               "status": {"userInfo": {"username": "alice", "groups": ["devs", "system:authenticated"]}}})
    );
    assert_eq!(
        identity::token_spec(&json!({"spec": {}}))
            .unwrap_err()
            .message,
        "token is required for TokenReview in authentication"
    );
}

async fn review(api: &Arc<Api>, review: Review, caller: &UserInfo, body: Value) -> Value {
    api.access
        .review(&api.cache, review, caller, None, body)
        .await
        .unwrap()
}

#[tokio::test]
async fn token_reviews_authenticate_as_requests_do() {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let admin = UserInfo::authenticated(crate::access::ADMIN_USER, vec!["system:masters".into()]);
    let own = api.access.authority().audiences().to_vec();
    let v = review(
        &api,
        Review::Token,
        &admin,
        json!({"spec": {"token": "test"}}),
    )
    .await;
    assert_eq!(v["status"]["authenticated"], true, "{v}");
    assert_eq!(v["status"]["user"]["username"], crate::access::ADMIN_USER);
    assert_eq!(v["status"]["audiences"], json!(own));
    let v = review(
        &api,
        Review::Token,
        &admin,
        json!({"spec": {"token": "test", "audiences": ["elsewhere"]}}),
    )
    .await;
    assert!(v["status"].get("authenticated").is_none(), "{v}");
    assert!(v["status"]["error"]
        .as_str()
        .unwrap()
        .contains("invalid for the target audiences"));
    let v = review(
        &api,
        Review::Token,
        &admin,
        json!({"spec": {"token": "a.b.c"}}),
    )
    .await;
    assert!(v["status"]["error"].is_string(), "{v}");
    // The admin may do anything, and a rules review says so.
    let v = review(
        &api,
        Review::SelfSubjectAccess,
        &admin,
        json!({"spec": {"resourceAttributes": {"verb": "delete", "resource": "nodes"}}}),
    )
    .await;
    assert_eq!(v["status"]["allowed"], true);
    let v = review(
        &api,
        Review::SelfSubjectRules,
        &admin,
        json!({"spec": {"namespace": "default"}}),
    )
    .await;
    assert_eq!(v["status"]["resourceRules"][0]["verbs"], json!(["*"]));
}
