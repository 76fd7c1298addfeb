//! An informer against a real member kube-apiserver: one watch and one store of ConfigMaps
//! read by several readers; a reader that comes late gets what is stored first; deletions come
//! with the object's last state; readers are handed the stored object, not a copy.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

mod common;

use common::fresh_namespace;
use flotilla_testkit::Members;
use flotilla_watch::{Change, Informer};
use futures::stream::BoxStream;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::runtime::watcher;
use kube::{Api, ResourceExt};

const NS: &str = "watch-informer";
/// On the test's ConfigMaps (the namespace has the member's own too); the informer selects it.
const LABEL: &str = "watch-informer";

fn configmap(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: Some(BTreeMap::from([(LABEL.to_owned(), "yes".to_owned())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), value.to_owned())])),
        ..ConfigMap::default()
    }
}

/// The next change of a reader about an object of the test's namespace, named with its
/// kind of change: `+name=value` applied, `-name=value` deleted.
async fn next(reader: &mut BoxStream<'static, Change<ConfigMap>>) -> (String, Arc<ConfigMap>) {
    loop {
        let change = tokio::time::timeout(Duration::from_secs(20), reader.next())
            .await
            .expect("a change within 20 s")
            .expect("the reader's stream goes on");
        let (sign, o) = match change {
            Change::Applied(o) => ('+', o),
            Change::Deleted(o) => ('-', o),
        };
        if o.namespace().as_deref() != Some(NS) {
            continue;
        }
        let value = o.data.as_ref().and_then(|d| d.get("v")).cloned();
        return (
            format!("{sign}{}={}", o.name_any(), value.unwrap_or_default()),
            o,
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_share_one_store_and_miss_nothing() {
    let members = tokio::task::block_in_place(|| Members::shared(1)).expect("a member");
    let client = members.client("member-1").await.expect("member client");
    let api = fresh_namespace(&client, NS).await;
    let post = PostParams::default();
    api.create(&post, &configmap("before", "1"))
        .await
        .expect("create");

    let informer: Informer<ConfigMap> = Informer::new(
        Api::all(client.clone()),
        watcher::Config::default().labels(LABEL),
    );
    let mut first = informer.subscribe();
    assert_eq!(next(&mut first).await.0, "+before=1", "the first list");

    api.create(&post, &configmap("during", "2"))
        .await
        .expect("create");
    let (seen, by_first) = next(&mut first).await;
    assert_eq!(seen, "+during=2");

    // A reader that comes after the list gets the stored objects first, the same ones.
    let mut late = informer.subscribe();
    let mut stored = Vec::new();
    for _ in 0..2 {
        let (seen, o) = next(&mut late).await;
        if seen == "+during=2" {
            assert!(
                Arc::ptr_eq(&o, &by_first),
                "readers are handed the stored object, not a copy"
            );
        }
        stored.push(seen);
    }
    stored.sort();
    assert_eq!(stored, ["+before=1", "+during=2"]);
    let store = informer.store();
    assert_eq!(
        store.state().len(),
        2,
        "the store holds what the informer selects"
    );
    assert!(
        store
            .state()
            .iter()
            .all(|o| o.metadata.managed_fields.is_none()),
        "stored objects are kept lean"
    );

    // Both follow changes and deletions (with the last state).
    let mut current = api.get("before").await.expect("get");
    current.data = configmap("before", "3").data;
    api.replace("before", &post, &current)
        .await
        .expect("replace");
    api.delete("during", &DeleteParams::default())
        .await
        .expect("delete");
    for reader in [&mut first, &mut late] {
        assert_eq!(next(reader).await.0, "+before=3");
        assert_eq!(next(reader).await.0, "-during=2");
    }

    // A dropped reader stops nobody.
    drop(late);
    api.create(&post, &configmap("after", "4"))
        .await
        .expect("create");
    assert_eq!(next(&mut first).await.0, "+after=4");
}
