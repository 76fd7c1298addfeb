//! Conformance: access reviews. `kubectl auth can-i` (with `--list`) and `auth whoami` answer
//! truly for a scoped service-account token; SubjectAccessReviews, LocalSubjectAccessReviews and
//! TokenReviews created raw are answered by the hub's real authorizer and authenticator, by
//! whoever RBAC lets create them; nothing is stored and discovery lists only `create`.

use crate::common::Hub;
use serde_json::{json, Value};

/// A hub with `team/bot` allowed to read ConfigMaps in `team`, and bot's token.
fn hub_with_bot() -> (Hub, String) {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "team"]);
    hub.ok(&["create", "serviceaccount", "bot", "-n", "team"]);
    hub.ok(&[
        "create",
        "role",
        "cm-reader",
        "-n",
        "team",
        "--verb=get,list,watch",
        "--resource=configmaps",
    ]);
    hub.ok(&[
        "create",
        "rolebinding",
        "bot-cm",
        "-n",
        "team",
        "--role=cm-reader",
        "--serviceaccount=team:bot",
    ]);
    let token = hub.ok(&["create", "token", "bot", "-n", "team"]);
    (hub, token.trim().to_string())
}

fn as_token(hub: &Hub, token: &str, args: &[&str]) -> std::process::Output {
    let mut a = vec!["--token", token];
    a.extend_from_slice(args);
    hub.kubectl(&a)
}

/// POST `body` to `path` with `kubectl create --raw`; the answer as JSON.
fn create_raw(hub: &Hub, token: Option<&str>, path: &str, body: &Value) -> Result<Value, String> {
    let mut args = vec![];
    if let Some(t) = token {
        args.extend(["--token", t]);
    }
    args.extend(["create", "--raw", path, "-f", "-"]);
    let out = hub.kubectl_stdin(&args, &body.to_string());
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(serde_json::from_slice(&out.stdout).expect("a JSON answer"))
}

#[test]
fn can_i_and_whoami_answer_truly_for_a_scoped_token() {
    let (hub, token) = hub_with_bot();
    let yes = as_token(
        &hub,
        &token,
        &["auth", "can-i", "list", "configmaps", "-n", "team"],
    );
    assert!(
        yes.status.success(),
        "{}",
        String::from_utf8_lossy(&yes.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&yes.stdout).trim(), "yes");
    for denied in [
        vec!["auth", "can-i", "delete", "configmaps", "-n", "team"],
        vec!["auth", "can-i", "list", "configmaps", "-n", "default"],
        vec!["auth", "can-i", "get", "secrets", "-n", "team"],
    ] {
        let no = as_token(&hub, &token, &denied);
        assert!(!no.status.success(), "{denied:?} should be no");
        assert_eq!(
            String::from_utf8_lossy(&no.stdout).trim(),
            "no",
            "{denied:?}"
        );
    }
    // The admin may do anything.
    assert_eq!(hub.ok(&["auth", "can-i", "delete", "nodes"]).trim(), "yes");

    // --list: what bot holds in team, its self-review rights from system:basic-user included.
    let list = as_token(&hub, &token, &["auth", "can-i", "--list", "-n", "team"]);
    assert!(
        list.status.success(),
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    let list = String::from_utf8_lossy(&list.stdout);
    let row = |resource: &str| {
        list.lines()
            .find(|l| l.starts_with(resource))
            .map(str::to_string)
    };
    let cm = row("configmaps").unwrap_or_else(|| panic!("no configmaps row:\n{list}"));
    assert!(cm.contains("[get list watch]"), "{cm}");
    assert!(
        row("selfsubjectaccessreviews.authorization.k8s.io").is_some(),
        "{list}"
    );
    assert!(row("secrets").is_none(), "{list}");
    // In another namespace, no ConfigMaps.
    let other = as_token(&hub, &token, &["auth", "can-i", "--list", "-n", "default"]);
    assert!(!String::from_utf8_lossy(&other.stdout).contains("configmaps"));

    let who = as_token(&hub, &token, &["auth", "whoami", "-o", "json"]);
    assert!(
        who.status.success(),
        "{}",
        String::from_utf8_lossy(&who.stderr)
    );
    let who: Value = serde_json::from_slice(&who.stdout).unwrap();
    assert_eq!(who["kind"], "SelfSubjectReview");
    let user = &who["status"]["userInfo"];
    assert_eq!(user["username"], "system:serviceaccount:team:bot");
    assert_eq!(
        user["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:team",
            "system:authenticated"
        ])
    );
    let uid = hub.ok(&[
        "get",
        "sa",
        "bot",
        "-n",
        "team",
        "-o",
        "jsonpath={.metadata.uid}",
    ]);
    assert_eq!(user["uid"], uid.trim());
}

#[test]
fn subject_access_and_token_reviews_are_answered_not_stored() {
    let (hub, token) = hub_with_bot();
    let sar = |verb: &str| {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
               "spec": {"user": "system:serviceaccount:team:bot",
                        "groups": ["system:serviceaccounts", "system:authenticated"],
                        "resourceAttributes": {"verb": verb, "resource": "configmaps", "namespace": "team", "version": "v1"}}})
    };
    let path = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
    let allowed = create_raw(&hub, None, path, &sar("list")).unwrap();
    assert_eq!(allowed["status"]["allowed"], true, "{allowed}");
    assert!(allowed["status"]["reason"]
        .as_str()
        .unwrap()
        .contains("RoleBinding \"bot-cm/team\""));
    let refused = create_raw(&hub, None, path, &sar("delete")).unwrap();
    assert_eq!(refused["status"]["allowed"], false, "{refused}");

    // The local form, in the namespace it asks about; in another namespace it is invalid (the
    // request's namespace is its metadata.namespace, as kube-apiserver fills it in).
    let mut local = sar("list");
    local["kind"] = json!("LocalSubjectAccessReview");
    let local_path = "/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews";
    let v = create_raw(&hub, None, local_path, &local).unwrap();
    assert_eq!(v["status"]["allowed"], true, "{v}");
    assert_eq!(v["metadata"]["namespace"], "team");
    let e = create_raw(
        &hub,
        None,
        "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
        &local,
    )
    .unwrap_err();
    assert!(
        e.contains("spec.resourceAttributes.namespace: Invalid value: \"team\": must match metadata.namespace"),
        "{e}"
    );
    // Neither attributes: kube's validation message.
    let e = create_raw(&hub, None, path, &json!({"spec": {"user": "x"}})).unwrap_err();
    assert!(
        e.contains("exactly one of nonResourceAttributes or resourceAttributes must be specified"),
        "{e}"
    );

    // bot may review itself but not others (system:auth-delegator is bound to no one).
    let e = create_raw(&hub, Some(&token), path, &sar("list")).unwrap_err();
    assert!(
        e.contains("cannot create resource \"subjectaccessreviews\""),
        "{e}"
    );
    let ssar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                      "spec": {"resourceAttributes": {"verb": "watch", "resource": "configmaps", "namespace": "team"}}});
    let v = create_raw(
        &hub,
        Some(&token),
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        &ssar,
    )
    .unwrap();
    assert_eq!(v["status"]["allowed"], true, "{v}");

    // TokenReview: bot's token authenticates as bot, for the hub's audience; junk does not.
    let tr = |t: &str, audiences: Value| {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
               "spec": {"token": t, "audiences": audiences}})
    };
    let tr_path = "/apis/authentication.k8s.io/v1/tokenreviews";
    let v = create_raw(&hub, None, tr_path, &tr(&token, Value::Null)).unwrap();
    assert_eq!(v["status"]["authenticated"], true, "{v}");
    assert_eq!(
        v["status"]["user"]["username"],
        "system:serviceaccount:team:bot"
    );
    assert_eq!(
        v["status"]["audiences"].as_array().map(Vec::len),
        Some(1),
        "{v}"
    );
    let v = create_raw(&hub, None, tr_path, &tr(&token, json!(["someone-else"]))).unwrap();
    assert!(v["status"]["authenticated"].is_null(), "{v}");
    assert!(
        v["status"]["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{v}"
    );
    let v = create_raw(&hub, None, tr_path, &tr("not-a-token", Value::Null)).unwrap();
    assert!(v["status"]["authenticated"].is_null(), "{v}");
    hub.ok(&["delete", "sa", "bot", "-n", "team"]);
    let v = create_raw(&hub, None, tr_path, &tr(&token, Value::Null)).unwrap();
    assert!(
        v["status"]["authenticated"].is_null(),
        "a token dies with its account: {v}"
    );

    // Create-only: discovery says so, and nothing else is served.
    let resources = hub.ok(&["get", "--raw", "/apis/authorization.k8s.io/v1"]);
    let resources: Value = serde_json::from_str(&resources).unwrap();
    for r in resources["resources"].as_array().unwrap() {
        assert_eq!(r["verbs"], json!(["create"]), "{r}");
    }
    let e = hub.fails(&["get", "--raw", path]);
    assert!(e.contains("MethodNotAllowed") || e.contains("405"), "{e}");
}

#[test]
fn impersonation_acts_as_whom_the_sender_may_impersonate() {
    let (hub, token) = hub_with_bot();
    let who = hub.ok(&[
        "auth",
        "whoami",
        "--as",
        "jane-doe",
        "--as-group",
        "developers",
        "--as-uid",
        "uniq-id",
        "-o",
        "json",
    ]);
    let who: Value = serde_json::from_str(&who).unwrap();
    assert_eq!(
        who["status"]["userInfo"],
        json!({"username": "jane-doe", "uid": "uniq-id", "groups": ["developers", "system:authenticated"]})
    );
    // Acting as bot, the admin has exactly bot's rights.
    let as_bot = ["--as", "system:serviceaccount:team:bot"];
    let yes = hub.kubectl(
        &[
            &as_bot[..],
            &["auth", "can-i", "list", "configmaps", "-n", "team"],
        ]
        .concat(),
    );
    assert_eq!(String::from_utf8_lossy(&yes.stdout).trim(), "yes");
    let e = hub.fails(&[&as_bot[..], &["get", "secrets", "-n", "team"]].concat());
    assert!(
        e.contains("User \"system:serviceaccount:team:bot\" cannot list resource \"secrets\""),
        "{e}"
    );
    // bot may not impersonate anyone.
    let out = as_token(
        &hub,
        &token,
        &["get", "configmaps", "-n", "team", "--as", "jane-doe"],
    );
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("users \"jane-doe\" is forbidden: User \"system:serviceaccount:team:bot\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"),
        "{e}"
    );
}
