//! Fair queuing through the real binary, with one seat for reads (`--max-requests-inflight 1`):
//! a ServiceAccount flooding the hub with slow LISTs waits behind its own requests, and past
//! its queue gets 429 `TooManyRequests`, while another user's GET is served
//! within a turn; the admin (exempt) is never queued.

mod common;

use std::time::{Duration, Instant};

use common::Hub;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::Client;

/// A client of `hub` with `token` instead of the admin's.
async fn client_as(hub: &Hub, token: Option<&str>) -> Client {
    let kc = Kubeconfig::read_from(&hub.kubeconfig).expect("kubeconfig");
    let mut cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("config");
    if let Some(t) = token {
        cfg.auth_info.token = Some(t.to_owned().into());
    }
    cfg.read_timeout = Some(Duration::from_secs(60));
    // HTTP/2: the flood's requests arrive at once on one connection, as a busy controller's do.
    flotilla_agent::client::multiplexed(cfg).expect("client")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_user_cannot_starve_another() {
    let hub = Hub::start_with(&["--max-requests-inflight", "1"]);
    hub.ok(&["create", "namespace", "busy"]);
    for sa in ["flood", "calm"] {
        hub.ok(&["-n", "busy", "create", "serviceaccount", sa]);
        hub.ok(&[
            "-n",
            "busy",
            "create",
            "rolebinding",
            sa,
            "--clusterrole=view",
            &format!("--serviceaccount=busy:{sa}"),
        ]);
    }
    // Lists of 1,500 ConfigMaps take a while each.
    let admin = client_as(&hub, None).await;
    let cms: Api<ConfigMap> = Api::namespaced(admin.clone(), "busy");
    let fill = (0..1500).map(|i| {
        let cms = cms.clone();
        async move {
            let cm: ConfigMap = serde_json::from_value(serde_json::json!({
                "metadata": {"name": format!("cm-{i}")},
                "data": {"v": "x".repeat(512)},
            }))
            .unwrap();
            cms.create(&Default::default(), &cm).await.expect("create");
        }
    });
    futures::stream::iter(fill)
        .buffer_unordered(32)
        .collect::<Vec<_>>()
        .await;

    let token = |sa: &str| {
        hub.ok(&["-n", "busy", "create", "token", sa])
            .trim()
            .to_owned()
    };
    let flood = client_as(&hub, Some(&token("flood"))).await;
    let calm = client_as(&hub, Some(&token("calm"))).await;

    let flood_lists: Api<ConfigMap> = Api::namespaced(flood, "busy");
    let flooding = tokio::spawn(async move {
        let all = (0..300).map(|_| {
            let api = flood_lists.clone();
            async move { api.list(&ListParams::default()).await }
        });
        futures::future::join_all(all).await
    });
    // Let the flood fill its queue, then ask as another user.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let calm_api: Api<ConfigMap> = Api::namespaced(calm, "busy");
    let started = Instant::now();
    calm_api
        .get("cm-7")
        .await
        .expect("the calm user's GET is served");
    let calm_took = started.elapsed();
    // The admin is exempt: served at once too.
    let started = Instant::now();
    cms.get("cm-8").await.expect("the admin's GET");
    let admin_took = started.elapsed();

    let results = flooding.await.expect("the flood");
    let refused: Vec<_> = results
        .iter()
        .filter_map(|r| match r {
            Err(kube::Error::Api(s)) => Some(s),
            _ => None,
        })
        .collect();
    let served = results.iter().filter(|r| r.is_ok()).count();
    eprintln!(
        "flood: {served} served, {} refused; calm GET {calm_took:?}, admin GET {admin_took:?}",
        refused.len()
    );
    assert!(
        !refused.is_empty(),
        "300 concurrent lists on one seat: some past the queue of 128 are refused ({served} served)"
    );
    for s in &refused {
        assert_eq!(
            (s.code, s.reason.as_str()),
            (429, "TooManyRequests"),
            "{s:?}"
        );
    }
    assert!(served > 0, "the flood is served too, in turn");
    // Served within a turn or two (10-20 ms here), not behind the flood's queue: each of its
    // lists holds the seat about 20 ms, so first-come-first-served would take over 2.5 s.
    assert!(
        calm_took < Duration::from_secs(1),
        "the calm user's GET took {calm_took:?}"
    );
    assert!(
        admin_took < Duration::from_secs(1),
        "the admin's GET took {admin_took:?}"
    );
}

/// `--max-watches-per-user`: a user's watch past the bound is a 429 until one of theirs
/// closes; the admin is not counted. `--max-unpaged-list-items`: a LIST without `limit` past
/// the bound is a 413 saying to page, while paged lists (kubectl's, kube-rs's) are served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_per_user_and_unpaged_lists_are_bounded() {
    use kube::api::WatchParams;
    let hub = Hub::start_with(&[
        "--max-watches-per-user",
        "3",
        "--max-unpaged-list-items",
        "5",
    ]);
    hub.ok(&["create", "namespace", "lim"]);
    hub.ok(&["-n", "lim", "create", "serviceaccount", "w"]);
    hub.ok(&[
        "-n",
        "lim",
        "create",
        "rolebinding",
        "w",
        "--clusterrole=view",
        "--serviceaccount=lim:w",
    ]);
    let token = hub.ok(&["-n", "lim", "create", "token", "w"]);
    let user: Api<ConfigMap> = Api::namespaced(client_as(&hub, Some(token.trim())).await, "lim");
    let admin: Api<ConfigMap> = Api::namespaced(client_as(&hub, None).await, "lim");

    let mut open = Vec::new();
    for _ in 0..3 {
        let w = user
            .watch(&WatchParams::default(), "0")
            .await
            .expect("a watch within the bound");
        open.push(w.boxed());
    }
    let refused = match user.watch(&WatchParams::default(), "0").await {
        Ok(_) => panic!("a fourth watch of one user was served"),
        Err(kube::Error::Api(s)) => s,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(
        (refused.code, refused.reason.as_str()),
        (429, "TooManyRequests")
    );
    assert!(
        refused.message.contains("--max-watches-per-user"),
        "{}",
        refused.message
    );
    // The admin is not counted.
    let mut admin_watches = Vec::new();
    for _ in 0..5 {
        let w = admin
            .watch(&WatchParams::default(), "0")
            .await
            .expect("the admin's watch");
        admin_watches.push(w.boxed());
    }
    // One closes: the user may open another.
    drop(open.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match user.watch(&WatchParams::default(), "0").await {
            Ok(w) => {
                open.push(w.boxed());
                break;
            }
            Err(kube::Error::Api(s)) if s.code == 429 && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("a watch after one closed: {e}"),
        }
    }

    // Unpaged lists: 6 ConfigMaps and kube-root-ca.crt are 7 > 5.
    for i in 0..6 {
        let cm: ConfigMap =
            serde_json::from_value(serde_json::json!({"metadata": {"name": format!("c{i}")}}))
                .unwrap();
        admin
            .create(&Default::default(), &cm)
            .await
            .expect("create");
    }
    let too_many = match admin.list(&ListParams::default()).await {
        Ok(l) => panic!("an unpaged list of {} items was served", l.items.len()),
        Err(kube::Error::Api(s)) => s,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(too_many.code, 413);
    assert!(
        too_many.message.contains("limit=500"),
        "{}",
        too_many.message
    );
    let page = admin
        .list(&ListParams::default().limit(3))
        .await
        .expect("a page");
    assert_eq!(page.items.len(), 3);
    assert!(page.metadata.continue_.is_some());
    // kubectl pages (--chunk-size 500 by default); without chunks it is told why.
    assert_eq!(
        hub.ok(&["-n", "lim", "get", "cm", "-o", "name"])
            .lines()
            .count(),
        7
    );
    let err = hub.fails(&["-n", "lim", "get", "cm", "--chunk-size=0"]);
    assert!(err.contains("--max-unpaged-list-items"), "{err}");
    drop(admin_watches);
}
