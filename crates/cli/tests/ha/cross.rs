//! One identity and one feed across replicas: replica 1's credentials work on every replica,
//! and a watch on replica 1 sees 1,000 creates made through replicas 2 and 3 in
//! resourceVersion order, each exactly once, with the revision its create returned.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, PostParams};

use crate::feed::{self, rv_of};
use crate::set::HaSet;

const NS: &str = "ha-cross";
const SELECTOR: &str = "ha-e2e=cross";
const CREATES: usize = 1000;
/// Creates in flight at once (half through replica 2, half through replica 3).
const IN_FLIGHT: usize = 8;

pub fn config_map(name: &str, label: &str) -> ConfigMap {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "labels": {"ha-e2e": label}},
        "data": {"name": name},
    }))
    .expect("a ConfigMap")
}

/// Every replica answers replica 1's admin token over TLS checked against replica 1's CA.
pub async fn shared_identity(set: &HaSet) {
    for k in 1..=set.replicas {
        let api = Api::<Namespace>::all(set.client_as(1, k).await);
        if let Err(e) = api.get("default").await {
            panic!(
                "replica {k} ({}) refuses replica 1's CA or admin token: {e}",
                set.server(k)
            );
        }
    }
}

pub async fn watch_sees_other_replicas_creates(set: &HaSet) {
    set.namespace(NS).await;
    let api = |k| async move { Api::<ConfigMap>::namespaced(set.client(k).await, NS) };
    let on1 = api(1).await;
    let start = feed::list_rv(&on1, SELECTOR).await;
    let watcher = feed::watch(vec![(1, on1.clone())], SELECTOR, start);
    let writers = [api(2).await, api(3).await];

    let begun = Instant::now();
    let acks: Vec<(String, u64, Instant)> = futures::stream::iter(0..CREATES)
        .map(|i| {
            let api = writers[i % 2].clone();
            async move {
                let name = format!("cm-{i:04}");
                let made = api
                    .create(&PostParams::default(), &config_map(&name, "cross"))
                    .await
                    .unwrap_or_else(|e| panic!("create {name} through replica {}: {e}", 2 + i % 2));
                let rv = rv_of(&made.metadata.resource_version.unwrap_or_default());
                (name, rv, Instant::now())
            }
        })
        .buffer_unordered(IN_FLIGHT)
        .collect()
        .await;
    let took = begun.elapsed();
    // Written last: once replica 1 delivers it, every earlier revision has been delivered.
    writers[0]
        .create(&PostParams::default(), &config_map("marker", "cross"))
        .await
        .expect("create the marker");
    assert!(
        watcher.wait_for("marker", Duration::from_secs(120)).await,
        "replica 1's watch did not deliver the marker written through replica 2 within 120 s: {}\n{}",
        watcher.describe(),
        set.log_tails(20)
    );

    let acked: BTreeMap<String, u64> = acks.iter().map(|(n, rv, _)| (n.clone(), *rv)).collect();
    let committed = feed::read_all(&on1, SELECTOR).await;
    {
        let log = watcher.log.lock().unwrap();
        let problems = feed::check("replica 1's watch", &log, &acked, &committed);
        assert!(problems.is_empty(), "{}", feed::summary(&problems));
        assert_eq!(committed.len(), CREATES + 1, "replica 1 lists every create");

        // Commit (acknowledged) to delivery on another replica: printed, not asserted.
        let mut delays: Vec<Duration> = acks
            .iter()
            .filter_map(|(name, _, acked_at)| {
                let seen = log.events.iter().find(|e| &e.name == name)?;
                Some(seen.at.saturating_duration_since(*acked_at))
            })
            .collect();
        delays.sort();
        let pct = |p: usize| delays[(delays.len() * p / 100).min(delays.len() - 1)];
        eprintln!(
            "ha: {CREATES} creates through replicas 2 and 3 in {took:.1?} ({:.0}/s); delivered on replica 1 after the acknowledgement: p50 {:?}, p99 {:?}",
            CREATES as f64 / took.as_secs_f64(),
            pct(50),
            pct(99)
        );
    }

    // Consistent reads: every replica lists what replica 1 lists.
    for (k, writer) in [(2, &writers[0]), (3, &writers[1])] {
        let listed = feed::read_all(writer, SELECTOR).await;
        assert!(
            listed == committed,
            "replica {k} lists {} of the ConfigMaps, replica 1 lists {}",
            listed.len(),
            committed.len()
        );
    }
}
