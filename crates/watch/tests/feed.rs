//! A feed against a real member kube-apiserver: the store follows the objects the config
//! selects, without their managedFields, and each change wakes the listener.

use std::sync::Arc;
use std::time::Duration;

mod common;

use common::fresh_namespace;
use flotilla_testkit::Members;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::runtime::{reflector, watcher};
use tokio::sync::Notify;

fn configmap(name: &str, label: Option<&str>) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: label.map(|l| [(l.to_owned(), "yes".to_owned())].into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// Waits for a wake-up, then until `done` holds of the store (a wake-up may come before the
/// event that matters).
async fn until(changed: &Notify, done: impl Fn() -> bool) {
    tokio::time::timeout(Duration::from_secs(20), async {
        while !done() {
            changed.notified().await;
        }
    })
    .await
    .expect("the store followed the change");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_store_follows_the_selected_objects_lean_and_wakes_the_listener() {
    let members = tokio::task::block_in_place(|| Members::shared(1)).expect("a member");
    let client = members.client("member-1").await.expect("member client");
    let ns = "watch-feed";
    let api = fresh_namespace(&client, ns).await;

    let (store, writer) = reflector::store();
    let changed = Arc::new(Notify::new());
    let config = watcher::Config::default().labels("watch-feed");
    let feed = tokio::spawn(flotilla_watch::feed(
        api.clone(),
        config,
        writer,
        changed.clone(),
    ));
    store.wait_until_ready().await.expect("the first list");

    let created = api
        .create(
            &PostParams::default(),
            &configmap("picked", Some("watch-feed")),
        )
        .await
        .expect("create");
    assert!(
        created.metadata.managed_fields.is_some(),
        "the API server records field managers"
    );
    api.create(&PostParams::default(), &configmap("skipped", None))
        .await
        .expect("create");
    until(&changed, || !store.is_empty()).await;
    let names: Vec<_> = store
        .state()
        .iter()
        .map(|c| c.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(names, ["picked"], "only what the config selects");
    assert!(
        store.state()[0].metadata.managed_fields.is_none(),
        "kept lean"
    );

    api.delete("picked", &DeleteParams::default())
        .await
        .expect("delete");
    until(&changed, || store.is_empty()).await;
    feed.abort();
    let _ = api.delete("skipped", &DeleteParams::default()).await;
}
