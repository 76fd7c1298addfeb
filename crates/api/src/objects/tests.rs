//! The write engine against a real API state on SQLite in a temp dir.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::admission::namespace::terminating;
use crate::handlers::objects::encode::output_raw;
use crate::Api;

async fn api(dir: &tempfile::TempDir) -> Arc<Api> {
    let store = flotilla_store::Store::open(&format!("sqlite:{}", dir.path().join("db").display()))
        .await
        .unwrap();
    let config = crate::api::Config::new(
        crate::auth::AdminToken::new("test"),
        "127.0.0.1:6443".into(),
        dir.path().join("signing-key.pem"),
    );
    Api::start(config, store).await.unwrap()
}

fn configmaps(api: &Api) -> Arc<ResourceInfo> {
    api.registry
        .snapshot()
        .get("", "v1", "configmaps")
        .cloned()
        .unwrap()
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}})
}

#[tokio::test]
async fn dry_run_create_stores_nothing_and_still_refuses_a_taken_name() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let res = configmaps(&api);
    let key = res.key(Some("default"), "a");

    match commit_create(&api, &res, cm("a"), Some("test"), true).await {
        Ok(Outcome::DryRun(v)) => assert_eq!(v["metadata"]["name"], "a"),
        _ => panic!("a dry run answers with the would-be object"),
    }
    api.cache.sync().await.unwrap();
    assert!(
        api.cache.get(&key).is_none(),
        "the dry run stored the object"
    );

    match commit_create(&api, &res, cm("a"), Some("test"), false).await {
        Ok(Outcome::Written(_)) => {}
        Ok(_) => panic!("the create did not write"),
        Err(e) => panic!("the create failed: {e:?}"),
    }
    match commit_create(&api, &res, cm("a"), Some("test"), true).await {
        Err(e) => assert_eq!((e.code, e.reason), (409, "AlreadyExists")),
        Ok(_) => panic!("a dry-run create of a taken name must conflict"),
    }
}

#[tokio::test]
async fn terminating_namespace_refusal_names_the_object() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let res = configmaps(&api);
    let e = terminating(&res, "team", "late");
    assert_eq!((e.code, e.reason), (403, "Forbidden"));
    assert_eq!(
        e.message,
        "configmaps \"late\" is forbidden: unable to create new content in namespace team because it is being terminated"
    );
    assert_eq!(e.details.unwrap()["name"], "late");
    // generateName: admission sees no name yet.
    let deploy = api
        .registry
        .snapshot()
        .get("apps", "v1", "deployments")
        .cloned()
        .unwrap();
    assert!(terminating(&deploy, "team", "")
        .message
        .starts_with("deployments.apps is forbidden: "));
}

#[tokio::test]
async fn create_in_a_namespace_written_a_moment_ago() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let res = configmaps(&api);
    for i in 0..20 {
        let ns = format!("fresh{i}");
        let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
        // Straight to the store: the watch cache learns of it only later.
        api.store
            .create(&format!("/registry/core/namespaces/{ns}"), render(body))
            .await
            .unwrap();
        let mut obj = cm("a");
        obj["metadata"]["namespace"] = json!(ns);
        if let Err(e) = commit_create(&api, &res, obj, Some("test"), false).await {
            panic!("create in {ns} failed: {e:?}");
        }
    }
}

#[tokio::test]
async fn creates_and_updates_are_validated_as_the_object_they_would_store() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let res = configmaps(&api);
    let limit = crate::admission::validation::MAX_DATA_SIZE;
    let mut big = cm("big");
    big["data"] = json!({"a": "x".repeat(limit + 1)});
    match commit_create(&api, &res, big, Some("test"), false).await {
        Err(e) => assert_eq!(
            (e.code, e.message.as_str()),
            (
                422,
                r#"ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes"#
            )
        ),
        Ok(_) => panic!("a ConfigMap over 1 MiB was stored"),
    }
    let mut half = cm("grows");
    half["data"] = json!({"a": "x".repeat(limit / 2)});
    assert!(commit_create(&api, &res, half, Some("test"), false)
        .await
        .is_ok());
    let key = res.key(Some("default"), "grows");
    let grown = guaranteed_update(&api, Writer::Client, &res, &key, "grows", false, |old| {
        let mut new = old.clone();
        new["data"]["b"] = json!("y".repeat(limit / 2 + 1));
        Ok(new)
    })
    .await;
    assert_eq!(grown.err().map(|e| e.code), Some(422));
}

#[tokio::test]
async fn events_written_through_either_api_are_one_object() {
    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let snap = api.registry.snapshot();
    let core = snap.get("", "v1", "events").cloned().unwrap();
    let new = snap.get("events.k8s.io", "v1", "events").cloned().unwrap();
    let ev = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "e", "namespace": "default"},
        "eventTime": "2024-01-02T03:04:05.000000Z", "reportingController": "ctl",
        "reportingInstance": "ctl-1", "action": "Make", "reason": "Made", "type": "Normal",
        "regarding": {"kind": "ConfigMap", "name": "c"}, "note": "made it"});
    let rec = match commit_create(&api, &new, ev, Some("test"), false).await {
        Ok(Outcome::Written(r)) => r,
        _ => panic!("the create did not write"),
    };
    // Stored once, as core/v1 (kube-apiserver's storage version for events).
    let stored: Value = serde_json::from_slice(&rec.value).unwrap();
    assert_eq!(stored["apiVersion"], "v1");
    assert_eq!(stored["message"], "made it");
    assert_eq!(stored["involvedObject"]["name"], "c");
    assert_eq!(stored["reportingComponent"], "ctl");
    assert_eq!(
        core.key(Some("default"), "e"),
        new.key(Some("default"), "e")
    );
    // The response through events.k8s.io is in its own shape.
    let served: Value = serde_json::from_slice(&output_raw(&new, &rec.value)).unwrap();
    assert_eq!(served["apiVersion"], "events.k8s.io/v1");
    assert_eq!(served["note"], "made it");
    assert!(served.get("message").is_none());

    // An update through core/v1 is seen through events.k8s.io, and vice versa.
    let key = core.key(Some("default"), "e");
    guaranteed_update(&api, Writer::Client, &core, &key, "e", false, |old| {
        assert_eq!(old["message"], "made it");
        let mut n = old.clone();
        n["count"] = json!(3);
        Ok(n)
    })
    .await
    .unwrap();
    let out = guaranteed_update(&api, Writer::Client, &new, &key, "e", false, |old| {
        assert_eq!(old["deprecatedCount"], 3);
        assert_eq!(old["regarding"]["kind"], "ConfigMap");
        let mut n = old.clone();
        n["note"] = json!("changed");
        Ok(n)
    })
    .await
    .unwrap();
    let Outcome::Written(rec) = out else {
        panic!("the update did not write")
    };
    let stored: Value = serde_json::from_slice(&rec.value).unwrap();
    assert_eq!(
        (stored["message"].as_str(), stored["count"].as_i64()),
        (Some("changed"), Some(3))
    );
    // Nothing changed: no write.
    let same = guaranteed_update(&api, Writer::Client, &new, &key, "e", false, |old| {
        Ok(old.clone())
    })
    .await;
    assert!(matches!(same, Ok(Outcome::Unchanged(_))));
}

/// Patches that name no resourceVersion never fail for a concurrent write: each is applied
/// again to the newer object (kube-apiserver's GuaranteedUpdate). Two controllers patching one
/// Cluster's status at once got 409 before.
#[tokio::test]
async fn concurrent_patches_without_a_resource_version_all_apply() {
    use axum::body::Body;
    use http::{Method, Request};
    use http_body_util::BodyExt;

    let dir = tempfile::tempdir().unwrap();
    let api = api(&dir).await;
    let res = configmaps(&api);
    commit_create(&api, &res, cm("shared"), Some("test"), false)
        .await
        .unwrap();
    let patch = |i: usize| {
        let api = api.clone();
        async move {
            let body = json!({"metadata": {"labels": {format!("writer-{i}"): "yes"}}});
            let req = Request::builder()
                .method(Method::PATCH)
                .uri("/api/v1/namespaces/default/configmaps/shared")
                .header(http::header::AUTHORIZATION, "Bearer test")
                .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
                .body(Body::from(serde_json::to_vec(&body).unwrap()))
                .unwrap();
            crate::handlers::handle(api, req).await.status().as_u16()
        }
    };
    let codes = futures::future::join_all((0..24).map(|i| tokio::spawn(patch(i)))).await;
    for code in codes {
        assert_eq!(code.unwrap(), 200);
    }
    // A patch naming a stale resourceVersion is still refused.
    let stale = json!({"metadata": {"resourceVersion": "1", "labels": {"late": "yes"}}});
    let req = Request::builder()
        .method(Method::PATCH)
        .uri("/api/v1/namespaces/default/configmaps/shared")
        .header(http::header::AUTHORIZATION, "Bearer test")
        .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
        .body(Body::from(serde_json::to_vec(&stale).unwrap()))
        .unwrap();
    let resp = crate::handlers::handle(api.clone(), req).await;
    assert_eq!(resp.status().as_u16(), 409);
    let stored = api
        .cache
        .get(&res.key(Some("default"), "shared"))
        .unwrap()
        .value();
    let labels = stored["metadata"]["labels"].as_object().unwrap();
    assert_eq!(labels.len(), 24, "{labels:?}");
    let _ = resp.into_body().collect().await;
}
