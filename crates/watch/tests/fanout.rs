//! A fanout against a real member kube-apiserver: one watch of ConfigMaps in all namespaces,
//! readers of one namespace each; a reader's store holds its namespace's selected objects and
//! follows their changes, whether it came before the shared watch listed or long after.

use std::time::Duration;

mod common;

use common::fresh_namespace;
use flotilla_testkit::Members;
use flotilla_watch::Fanout;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{watcher, WatchStreamExt};

const LABEL: &str = "watch-fanout";

fn configmap(name: &str, picked: bool) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            labels: picked.then(|| [(LABEL.to_owned(), "yes".to_owned())].into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// A reader of `ns` from `fanout`, kept in a store by a task of its own.
fn read(fanout: &Fanout<ConfigMap>, ns: &str) -> (Store<ConfigMap>, tokio::task::JoinHandle<()>) {
    let (store, writer) = reflector::store();
    let events = fanout.subscribe(ns).reflect(writer);
    (store, tokio::spawn(events.for_each(|_| async {})))
}

fn names(store: &Store<ConfigMap>) -> Vec<String> {
    let mut names: Vec<String> = store
        .state()
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    names
}

async fn until(store: &Store<ConfigMap>, want: &[&str]) {
    let waited = tokio::time::timeout(Duration::from_secs(20), async {
        while names(store) != want {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "the reader's store holds {:?}, expected {want:?}",
        names(store)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readers_see_their_namespace_whenever_they_come() {
    let members = tokio::task::block_in_place(|| Members::shared(1)).expect("a member");
    let client = members.client("member-1").await.expect("member client");
    let a = fresh_namespace(&client, "fanout-a").await;
    let b = fresh_namespace(&client, "fanout-b").await;
    let post = PostParams::default();
    a.create(&post, &configmap("a1", true))
        .await
        .expect("create");
    a.create(&post, &configmap("a-unlabelled", false))
        .await
        .expect("create");
    b.create(&post, &configmap("b1", true))
        .await
        .expect("create");

    let fanout = Fanout::new(client.clone(), watcher::Config::default().labels(LABEL));
    // The first reader comes as the shared watch starts.
    let (in_a, _a) = read(&fanout, "fanout-a");
    until(&in_a, &["a1"]).await;
    a.create(&post, &configmap("a2", true))
        .await
        .expect("create");
    b.create(&post, &configmap("b2", true))
        .await
        .expect("create");
    until(&in_a, &["a1", "a2"]).await;

    // A reader that comes long after lists its namespace, then follows it.
    let (in_b, _b) = read(&fanout, "fanout-b");
    until(&in_b, &["b1", "b2"]).await;
    b.delete("b1", &DeleteParams::default())
        .await
        .expect("delete");
    b.create(&post, &configmap("b3", true))
        .await
        .expect("create");
    until(&in_b, &["b2", "b3"]).await;
    assert_eq!(
        names(&in_a),
        ["a1", "a2"],
        "a reader sees its namespace only"
    );

    // A second reader of the same namespace gets it all too; a dropped one stops nobody.
    let (again, second) = read(&fanout, "fanout-a");
    until(&again, &["a1", "a2"]).await;
    second.abort();
    a.delete("a1", &DeleteParams::default())
        .await
        .expect("delete");
    until(&in_a, &["a2"]).await;
}
