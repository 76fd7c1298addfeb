use std::path::Path;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, PostParams, WatchEvent, WatchParams};
use kube::runtime::watcher;

use super::*;
use crate::serve::pki;

/// An API server on an in-memory store with admin token `token`, and a kubeconfig holding
/// `token` in `dir`.
async fn start(
    dir: &Path,
    token: &str,
    kubeconfig_token: &str,
) -> (Arc<flotilla_api::Api>, std::path::PathBuf) {
    let api = flotilla_api::Api::start(
        flotilla_api::Config {
            watch_buffer: 64,
            ..flotilla_api::Config::new(
                flotilla_api::auth::AdminToken::new(token),
                "127.0.0.1:6443".into(),
                dir.join(flotilla_api::access::signing_key::FILE_NAME),
            )
        },
        flotilla_store::Store::open("memory:").await.unwrap(),
    )
    .await
    .unwrap();
    let ca = "-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n";
    let kubeconfig = dir.join("admin.kubeconfig");
    pki::write_kubeconfig(&kubeconfig, "https://127.0.0.1:6443", ca, kubeconfig_token).unwrap();
    (api, kubeconfig)
}

#[tokio::test]
async fn requests_and_watches_are_served_in_process_as_the_kubeconfigs_user() {
    let dir = tempfile::tempdir().unwrap();
    let (api, kubeconfig) = start(dir.path(), "admin-token", "admin-token").await;
    let hub = client(api, &HubConfig::read(&kubeconfig, "proc-a").unwrap()).unwrap();
    let namespaces: Api<Namespace> = Api::all(hub.clone());
    assert!(namespaces
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .iter()
        .any(|n| n.metadata.name.as_deref() == Some("default")));

    let cms: Api<ConfigMap> = Api::namespaced(hub.clone(), "default");
    let mut watch = cms
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "one"}, "data": {"k": "v"}
    }))
    .unwrap();
    let created = cms.create(&PostParams::default(), &cm).await.unwrap();
    let managers: Vec<_> = created
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|e| e.manager.as_deref())
        .collect();
    assert_eq!(
        managers,
        ["flotilla-controllers"],
        "a write naming no field manager is the controllers' by their User-Agent"
    );
    let event = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match watch.try_next().await.unwrap() {
                Some(WatchEvent::Bookmark(_)) => continue,
                other => return other,
            }
        }
    })
    .await
    .expect("a watch event within 5 s");
    assert!(
        matches!(&event, Some(WatchEvent::Added(c)) if c.metadata.name.as_deref() == Some("one")),
        "{event:?}"
    );
    // kube-rs' watcher (list, then watch) works over it as over HTTP.
    let first = watcher(cms, watcher::Config::default())
        .boxed()
        .next()
        .await;
    assert!(matches!(first, Some(Ok(_))), "{first:?}");
}

#[tokio::test]
async fn a_wrong_token_is_refused_and_fenced_writes_stay_fenced() {
    let dir = tempfile::tempdir().unwrap();
    let (api, kubeconfig) = start(dir.path(), "admin-token", "not-the-token").await;
    let stranger = client(
        api.clone(),
        &HubConfig::read(&kubeconfig, "proc-a").unwrap(),
    )
    .unwrap();
    let err = Api::<Namespace>::all(stranger)
        .list(&Default::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, kube::Error::Api(s) if s.code == 401),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let (api, kubeconfig) = start(dir.path(), "admin-token", "admin-token").await;
    let hub = client(api, &HubConfig::read(&kubeconfig, "proc-a").unwrap()).unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(hub, "default");
    let cm: ConfigMap =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "x"}})).unwrap();
    // Under a fence naming a lease nobody holds, the write is refused: the fence header rides
    // on in-process requests too.
    let fenced = flotilla_controllers::fence::under(
        "flotilla-shard-0",
        "proc-a",
        cms.create(&PostParams::default(), &cm),
    )
    .await;
    assert!(
        matches!(&fenced, Err(kube::Error::Api(s)) if s.code == 409),
        "{fenced:?}"
    );
    assert!(cms.get_opt("x").await.unwrap().is_none());
}
