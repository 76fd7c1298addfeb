//! Join requests through the whole request path (authenticate → authorize → admission → store)
//! of a real API on SQLite in a temp dir.

use std::sync::Arc;

use axum::body::Body;
use http::{Method, Request};
use http_body_util::BodyExt;
use serde_json::{json, Value};

use crate::handlers::handle;
use crate::Api;

const ADMIN: &str = "test";
const CLUSTERS: &str = "/apis/cluster.flotilla.io/v1alpha1/clusters";
const SECRETS: &str = "/api/v1/namespaces/flotilla-system/secrets";

async fn call(
    api: &Arc<Api>,
    method: Method,
    path: &str,
    token: &str,
    body: Option<(&str, Value)>,
) -> (u16, Value) {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header(http::header::AUTHORIZATION, format!("Bearer {token}"));
    let body = match body {
        Some((content_type, v)) => {
            req = req.header(http::header::CONTENT_TYPE, content_type);
            Body::from(serde_json::to_vec(&v).unwrap())
        }
        None => Body::empty(),
    };
    let resp = handle(api.clone(), req.body(body).unwrap()).await;
    let code = resp.status().as_u16();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

async fn post(api: &Arc<Api>, path: &str, token: &str, body: Value) -> (u16, Value) {
    call(
        api,
        Method::POST,
        path,
        token,
        Some(("application/json", body)),
    )
    .await
}

async fn get(api: &Arc<Api>, path: &str, token: &str) -> (u16, Value) {
    call(api, Method::GET, path, token, None).await
}

async fn start() -> (tempfile::TempDir, Arc<Api>) {
    let dir = tempfile::tempdir().unwrap();
    let api = Api::for_tests(dir.path()).await;
    let (code, _) = post(
        &api,
        "/api/v1/namespaces",
        ADMIN,
        json!({"metadata": {"name": "flotilla-system"}}),
    )
    .await;
    assert!(code == 201 || code == 409, "{code}");
    (dir, api)
}

/// Store the token Secret for `id.<secret>` with `extra` stringData.
async fn token(api: &Arc<Api>, id: &str, secret: &str, extra: Value) {
    let mut string_data = json!({
        "token-id": id,
        "token-secret": secret,
        "usage-bootstrap-authentication": "true",
    });
    for (k, v) in extra.as_object().unwrap() {
        string_data[k] = v.clone();
    }
    let (code, body) = post(
        api,
        SECRETS,
        ADMIN,
        json!({
            "metadata": {"name": format!("bootstrap-token-{id}")},
            "type": "bootstrap.kubernetes.io/token",
            "stringData": string_data,
        }),
    )
    .await;
    assert_eq!(code, 201, "{body}");
}

fn cluster(name: &str) -> Value {
    json!({
        "apiVersion": "cluster.flotilla.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {
            "name": name,
            "labels": {"env": "prod"},
            "annotations": {
                "cluster.flotilla.io/requested-by": "system:bootstrap:forged",
                "note": "kept",
            },
        },
        "spec": {
            "syncMode": "Push",
            "region": "eu",
            "apiEndpoint": "https://m.example:6443",
            "secretRef": {"namespace": "flotilla-system", "name": "steal-me"},
            "taints": [{"key": "k", "effect": "NoSchedule"}],
        },
        "status": {"kubernetesVersion": "v1.0.0"},
    })
}

fn requested_by(obj: &Value) -> &Value {
    &obj["metadata"]["annotations"]["cluster.flotilla.io/requested-by"]
}

#[tokio::test]
async fn only_a_valid_unexpired_token_secret_authenticates() {
    let (_dir, api) = start().await;
    token(&api, "aaaaaa", "0123456789abcdef", json!({})).await;
    token(
        &api,
        "bbbbbb",
        "0123456789abcdef",
        json!({"expiration": "2001-01-01T00:00:00Z"}),
    )
    .await;
    token(
        &api,
        "cccccc",
        "0123456789abcdef",
        json!({"expiration": "2999-01-01T00:00:00Z"}),
    )
    .await;
    token(
        &api,
        "dddddd",
        "0123456789abcdef",
        json!({"usage-bootstrap-authentication": "false"}),
    )
    .await;
    let cases = [
        ("aaaaaa.0123456789abcdef", 200),
        ("cccccc.0123456789abcdef", 200),
        ("aaaaaa.0123456789abcdee", 401),
        ("bbbbbb.0123456789abcdef", 401),
        ("dddddd.0123456789abcdef", 401),
        ("eeeeee.0123456789abcdef", 401),
    ];
    for (t, want) in cases {
        let (code, body) = get(&api, "/apis", t).await;
        assert_eq!(code, want, "{t}: {body}");
        if want == 401 {
            assert_eq!(body["reason"], "Unauthorized", "{t}");
        }
    }
}

#[tokio::test]
async fn a_bootstrap_token_asks_to_join_once_and_reads_only_its_own_request() {
    let (_dir, api) = start().await;
    token(&api, "abcdef", "0123456789abcdef", json!({})).await;
    let t = "abcdef.0123456789abcdef";
    let other = json!({"metadata": {"name": "other"}, "spec": {}});
    let (code, _) = post(&api, CLUSTERS, ADMIN, other).await;
    assert_eq!(code, 201);

    // A dry run is admitted the same way and leaves the token unused.
    let path = format!("{CLUSTERS}?dryRun=All");
    let (code, dry) = post(&api, &path, t, cluster("m1")).await;
    assert_eq!(code, 201, "{dry}");
    assert_eq!(requested_by(&dry), "system:bootstrap:abcdef");
    assert_eq!(get(&api, &format!("{CLUSTERS}/m1"), ADMIN).await.0, 404);

    let (code, created) = post(&api, CLUSTERS, t, cluster("m1")).await;
    assert_eq!(code, 201, "{created}");
    let (_, stored) = get(&api, &format!("{CLUSTERS}/m1"), ADMIN).await;
    assert_eq!(requested_by(&stored), "system:bootstrap:abcdef");
    assert_eq!(stored["metadata"]["annotations"]["note"], "kept");
    assert_eq!(stored["metadata"]["labels"]["env"], "prod");
    assert_eq!(
        stored["spec"],
        json!({"syncMode": "Pull", "region": "eu", "apiEndpoint": "https://m.example:6443"})
    );
    assert!(stored.get("status").is_none(), "{stored}");

    for path in [format!("{CLUSTERS}/m1"), format!("{CLUSTERS}/m1/status")] {
        let (code, body) = get(&api, &path, t).await;
        assert_eq!(code, 200, "{path}: {body}");
    }
    let denied = [
        CLUSTERS.to_string(),
        format!("{CLUSTERS}/other"),
        format!("{CLUSTERS}/missing"),
        SECRETS.to_string(),
        "/api/v1/namespaces".to_string(),
    ];
    for path in denied {
        let (code, body) = get(&api, &path, t).await;
        assert_eq!(code, 403, "{path}: {body}");
        assert_eq!(body["reason"], "Forbidden");
    }
    let merge = Some((
        "application/merge-patch+json",
        json!({"spec": {"region": "us"}}),
    ));
    let (code, _) = call(&api, Method::PATCH, &format!("{CLUSTERS}/m1"), t, merge).await;
    assert_eq!(code, 403, "a join request cannot be changed by its token");
    let (code, _) = call(&api, Method::DELETE, &format!("{CLUSTERS}/m1"), t, None).await;
    assert_eq!(code, 403);

    let (code, body) = post(&api, CLUSTERS, t, cluster("m2")).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "clusters.cluster.flotilla.io \"m2\" is forbidden: this bootstrap token was already \
         used to ask to join as cluster \"m1\"; create a new one with flotilla token create"
    );
    let (code, body) = post(&api, CLUSTERS, t, cluster("m1")).await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (409, Some("AlreadyExists"))
    );
}

#[tokio::test]
async fn a_pinned_token_asks_only_as_its_cluster() {
    let (_dir, api) = start().await;
    token(
        &api,
        "pinned",
        "0123456789abcdef",
        json!({"flotilla-cluster": "m3"}),
    )
    .await;
    let t = "pinned.0123456789abcdef";
    let (code, body) = post(&api, CLUSTERS, t, cluster("m4")).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "clusters.cluster.flotilla.io \"m4\" is forbidden: this bootstrap token may only ask \
         to join as cluster \"m3\""
    );
    assert_eq!(body["details"]["name"], "m4");
    let (code, body) = post(&api, CLUSTERS, t, cluster("m3")).await;
    assert_eq!(code, 201, "{body}");
}

#[tokio::test]
async fn only_the_hub_sets_requested_by() {
    let (_dir, api) = start().await;
    token(&api, "abcdef", "0123456789abcdef", json!({})).await;
    let (code, admin_made) = post(&api, CLUSTERS, ADMIN, cluster("a1")).await;
    assert_eq!(code, 201);
    assert!(requested_by(&admin_made).is_null(), "{admin_made}");
    assert_eq!(
        admin_made["spec"]["syncMode"], "Push",
        "admins are not rewritten"
    );
    let (code, _) = post(&api, CLUSTERS, "abcdef.0123456789abcdef", cluster("j1")).await;
    assert_eq!(code, 201);

    let forge = json!({"metadata": {"annotations": {"cluster.flotilla.io/requested-by": "x"}}});
    let remove = json!({"metadata": {"annotations": {"cluster.flotilla.io/requested-by": null}}});
    let cases = [
        ("a1", forge.clone(), Value::Null),
        ("j1", forge, json!("system:bootstrap:abcdef")),
        ("j1", remove, json!("system:bootstrap:abcdef")),
    ];
    for (name, patch, want) in cases {
        let path = format!("{CLUSTERS}/{name}");
        let body = Some(("application/merge-patch+json", patch.clone()));
        let (code, out) = call(&api, Method::PATCH, &path, ADMIN, body).await;
        assert_eq!(code, 200, "{patch}: {out}");
        assert_eq!(requested_by(&out), &want, "{name} after {patch}");
    }
    // Server-side apply creates and updates the same way.
    let apply = Some(("application/apply-patch+yaml", cluster("a2")));
    let path = format!("{CLUSTERS}/a2?fieldManager=test");
    let (code, out) = call(&api, Method::PATCH, &path, ADMIN, apply).await;
    assert_eq!(code, 201, "{out}");
    assert!(requested_by(&out).is_null(), "{out}");
    let mut forged = cluster("j1");
    forged["spec"] = json!({"syncMode": "Pull"});
    forged["metadata"]["annotations"] = json!({"cluster.flotilla.io/requested-by": "x"});
    let apply = Some(("application/apply-patch+yaml", forged));
    let path = format!("{CLUSTERS}/j1?fieldManager=test&force=true");
    let (code, out) = call(&api, Method::PATCH, &path, ADMIN, apply).await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(requested_by(&out), "system:bootstrap:abcdef");
    // An update that leaves the annotations out keeps it too.
    let (_, mut j1) = get(&api, &format!("{CLUSTERS}/j1"), ADMIN).await;
    j1["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("annotations");
    let body = Some(("application/json", j1));
    let (code, out) = call(&api, Method::PUT, &format!("{CLUSTERS}/j1"), ADMIN, body).await;
    assert_eq!(code, 200, "{out}");
    assert_eq!(requested_by(&out), "system:bootstrap:abcdef");
}

#[tokio::test]
async fn rbac_still_applies_to_bootstrap_users() {
    let (_dir, api) = start().await;
    token(&api, "abcdef", "0123456789abcdef", json!({})).await;
    let t = "abcdef.0123456789abcdef";
    let sa = "/api/v1/namespaces/flotilla-system/serviceaccounts";
    let (code, _) = post(&api, sa, ADMIN, json!({"metadata": {"name": "agent"}})).await;
    assert_eq!(code, 201);
    let request =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}});
    let token_path = format!("{sa}/agent/token");
    assert_eq!(post(&api, &token_path, t, request.clone()).await.0, 403);

    let rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/flotilla-system";
    let role = json!({
        "metadata": {"name": "join"},
        "rules": [{"apiGroups": [""], "resources": ["serviceaccounts/token"],
                   "resourceNames": ["agent"], "verbs": ["create"]}],
    });
    assert_eq!(
        post(&api, &format!("{rbac}/roles"), ADMIN, role).await.0,
        201
    );
    let binding = json!({
        "metadata": {"name": "join"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "join"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                      "name": "system:bootstrap:abcdef"}],
    });
    assert_eq!(
        post(&api, &format!("{rbac}/rolebindings"), ADMIN, binding)
            .await
            .0,
        201
    );
    // RBAC decides on what the cache has applied; a kubectl round trip gives it that time.
    api.cache.sync().await.unwrap();
    let (code, body) = post(&api, &token_path, t, request).await;
    assert_eq!(code, 201, "{body}");
    assert!(body["status"]["token"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
}

#[tokio::test]
async fn a_cluster_name_that_cannot_make_a_namespace_is_invalid() {
    let (_dir, api) = start().await;
    token(&api, "dddddd", "0123456789abcdef", json!({})).await;
    let long = "a".repeat(52);
    let cases = [
        (
            ADMIN,
            json!({"metadata": {"name": "eu.west"}, "spec": {}}),
            "metadata.name",
            "eu.west",
        ),
        (
            ADMIN,
            json!({"metadata": {"name": long}, "spec": {}}),
            "metadata.name",
            long.as_str(),
        ),
        (
            ADMIN,
            json!({"metadata": {"generateName": "a.b-"}, "spec": {}}),
            "metadata.generateName",
            "a.b-",
        ),
        (
            "dddddd.0123456789abcdef",
            cluster("m.1"),
            "metadata.name",
            "m.1",
        ),
    ];
    for (who, body, field, name) in cases {
        let (code, status) = post(&api, CLUSTERS, who, body).await;
        assert_eq!(code, 422, "{name}: {status}");
        assert_eq!(status["reason"], "Invalid", "{status}");
        let cause = &status["details"]["causes"][0];
        assert_eq!(cause["field"], field, "{status}");
        let message = cause["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with(&format!("Invalid value: {name:?}")),
            "{message}"
        );
    }
    let (_, list) = get(&api, CLUSTERS, ADMIN).await;
    assert_eq!(list["items"], json!([]), "nothing stored");
    // The refused request did not use the token up.
    let (code, body) = post(&api, CLUSTERS, "dddddd.0123456789abcdef", cluster("m1")).await;
    assert_eq!(code, 201, "{body}");
}
