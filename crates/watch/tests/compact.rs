//! A `Compact` informer against a real member kube-apiserver: it stores each object as its
//! trim leaves it, packed, and readers get back the object as it was on the server (less what
//! was trimmed), through changes and a deletion.

use std::collections::BTreeMap;
use std::time::Duration;

mod common;

use common::fresh_namespace;
use flotilla_testkit::Members;
use flotilla_watch::{Change, Compact, Informer};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::runtime::watcher;
use kube::ResourceExt;

const NS: &str = "watch-compact";

fn configmap(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(NS.to_owned()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([
            ("v".to_owned(), value.to_owned()),
            ("bulk".to_owned(), "x".repeat(2048)),
        ])),
        ..ConfigMap::default()
    }
}

/// Cuts what no reader of the test reads: managedFields and the bulky key.
fn trim(cm: &mut ConfigMap) {
    flotilla_watch::lean(cm);
    if let Some(data) = cm.data.as_mut() {
        data.remove("bulk");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compact_informer_keeps_objects_packed_and_hands_them_back_whole() {
    let members = tokio::task::block_in_place(|| Members::shared(1)).expect("a member");
    let client = members.client("member-1").await.expect("member client");
    let api = fresh_namespace(&client, NS).await;
    let created = api
        .create(&PostParams::default(), &configmap("web", "1"))
        .await
        .expect("create");

    let informer: Informer<Compact<ConfigMap>> = Informer::compact(
        api.clone(),
        watcher::Config::default().fields("metadata.name=web"),
        trim,
    );
    let mut changes = informer.subscribe();
    let mut next = async || -> (bool, ConfigMap) {
        let change = tokio::time::timeout(Duration::from_secs(20), changes.next())
            .await
            .expect("a change within 20 s")
            .expect("the stream goes on");
        match change {
            Change::Applied(kept) => (true, kept.unpack().expect("unpacks")),
            Change::Deleted(kept) => (false, kept.unpack().expect("unpacks")),
        }
    };

    let (applied, first) = next().await;
    assert!(applied);
    let mut expected = created.clone();
    trim(&mut expected);
    assert_eq!(first, expected, "the object as the server has it, trimmed");
    assert_eq!(
        informer.store().state().len(),
        1,
        "stored packed, keyed as the object"
    );

    let mut changed = created;
    changed.data = configmap("web", "2").data;
    let changed = api
        .replace("web", &PostParams::default(), &changed)
        .await
        .expect("replace");
    let (applied, second) = next().await;
    assert!(applied);
    assert_eq!(
        second
            .data
            .as_ref()
            .and_then(|d| d.get("v"))
            .map(String::as_str),
        Some("2")
    );
    assert_eq!(second.resource_version(), changed.resource_version());

    api.delete("web", &DeleteParams::default())
        .await
        .expect("delete");
    let (applied, last) = next().await;
    assert!(!applied, "a deletion");
    assert_eq!(last.name_any(), "web");
    assert!(informer.store().state().is_empty());
}
