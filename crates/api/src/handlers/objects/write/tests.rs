//! Create against a real API state on SQLite in a temp dir.

use std::sync::Arc;

use serde_json::json;

use super::*;

async fn api(dir: &tempfile::TempDir) -> Arc<Api> {
    let store = flotilla_store::Store::open(&format!("sqlite:{}", dir.path().join("db").display()))
        .await
        .unwrap();
    let config = crate::api::Config {
        admin_token: crate::auth::AdminToken::new("test"),
        advertise_address: "127.0.0.1:6443".into(),
        signing_key_file: dir.path().join("signing-key.pem"),
    };
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
    let limit = crate::validation::MAX_DATA_SIZE;
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
    let grown = guaranteed_update(&api, &res, &key, "grows", false, |old| {
        let mut new = old.clone();
        new["data"]["b"] = json!("y".repeat(limit / 2 + 1));
        Ok(new)
    })
    .await;
    assert_eq!(grown.err().map(|e| e.code), Some(422));
}
