//! kube-rs 5 against a real hub: typed CRUD, list with selectors, patch, and kube-runtime's
//! watcher seeing every change.

mod common;

use std::time::Duration;

use common::Hub;
use futures::TryStreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::watcher::{self, Event};
use kube::Client;

async fn client(hub: &Hub) -> Client {
    let kc = Kubeconfig::read_from(&hub.kubeconfig).expect("read kubeconfig");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    Client::try_from(cfg).expect("client")
}

fn cm(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<std::collections::BTreeMap<_, _>>()},
        "data": {"k": "v"},
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_crud_and_watch() {
    let hub = Hub::start();
    let client = client(&hub).await;
    let nss: Api<Namespace> = Api::all(client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(serde_json::json!({"metadata": {"name": "krs"}})).unwrap(),
    )
    .await
    .expect("create ns");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "krs");

    // The watcher starts before the writes and must see each of them.
    let seen = tokio::spawn({
        let cms = cms.clone();
        async move {
            let mut names = Vec::new();
            let stream = watcher::watcher(cms, watcher::Config::default());
            futures::pin_mut!(stream);
            while let Ok(Some(ev)) =
                tokio::time::timeout(Duration::from_secs(20), stream.try_next())
                    .await
                    .map(|r| r.expect("watch"))
            {
                match ev {
                    Event::Apply(o) => names.push(format!(
                        "apply:{}:{}",
                        o.metadata.name.unwrap(),
                        o.data
                            .unwrap_or_default()
                            .get("k")
                            .cloned()
                            .unwrap_or_default()
                    )),
                    Event::Delete(o) => {
                        names.push(format!("delete:{}", o.metadata.name.unwrap()));
                        return names;
                    }
                    _ => {}
                }
            }
            names
        }
    });
    tokio::time::sleep(Duration::from_millis(500)).await;

    let created = cms
        .create(&PostParams::default(), &cm("a", &[("app", "web")]))
        .await
        .expect("create");
    assert!(created.metadata.uid.is_some() && created.metadata.resource_version.is_some());
    cms.create(&PostParams::default(), &cm("b", &[("app", "db")]))
        .await
        .expect("create b");
    let got = cms.get("a").await.expect("get");
    assert_eq!(
        got.metadata.resource_version,
        created.metadata.resource_version
    );

    // Every namespace also holds its kube-root-ca.crt (unlabelled), as in Kubernetes.
    let all = cms.list(&ListParams::default()).await.expect("list");
    let mut names: Vec<_> = all
        .items
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b", "kube-root-ca.crt"]);
    let web = cms
        .list(&ListParams::default().labels("app=web"))
        .await
        .expect("list by label");
    assert_eq!(web.items.len(), 1);

    let patched = cms
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"data": {"k": "w"}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(patched.data.unwrap()["k"], "w");

    // Stale resourceVersion → 409 Conflict.
    let mut stale = got.clone();
    stale.data = Some([("k".to_string(), "x".to_string())].into());
    let err = cms
        .replace("a", &PostParams::default(), &stale)
        .await
        .expect_err("stale update must conflict");
    match err {
        kube::Error::Api(s) => assert_eq!(s.code, 409),
        other => panic!("expected a 409, got {other:?}"),
    }

    cms.delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    let names = seen.await.unwrap();
    assert!(names.contains(&"apply:a:v".to_string()), "{names:?}");
    assert!(names.contains(&"apply:a:w".to_string()), "{names:?}");
    assert!(names.contains(&"delete:a".to_string()), "{names:?}");
}
