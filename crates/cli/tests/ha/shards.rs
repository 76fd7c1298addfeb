//! Controllers in every replica share the work by shard Leases: the 16 Leases
//! `flotilla-system/flotilla-shard-<i>` are split among the three replicas' controller
//! identities; when replica 2 is killed with SIGKILL the two survivors take its shards over
//! (the time is printed; the target is 15 s), and when it comes back on its data
//! directory it takes a share again.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams};

use crate::set::HaSet;

const SHARDS: usize = 16;
const VICTIM: usize = 2;

/// Holder of each shard Lease (`flotilla-shard-<i>` → holderIdentity, "" when none), as
/// `api` lists them.
async fn holders(api: &Api<Lease>) -> BTreeMap<String, String> {
    api.list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|lease| {
            let name = lease.metadata.name?;
            name.starts_with("flotilla-shard-").then(|| {
                let holder = lease
                    .spec
                    .and_then(|s| s.holder_identity)
                    .unwrap_or_default();
                (name, holder)
            })
        })
        .collect()
}

/// How many shards each identity holds.
fn shares(holders: &BTreeMap<String, String>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for h in holders.values() {
        *out.entry(h.clone()).or_insert(0) += 1;
    }
    out
}

/// Wait until `ok` holds for the shard holders read through `api`; the time it took, or a
/// panic naming `what` and the last holders seen.
async fn until(
    api: &Api<Lease>,
    within: Duration,
    what: &str,
    ok: impl Fn(&BTreeMap<String, String>) -> bool,
) -> Duration {
    let begun = Instant::now();
    loop {
        let now = holders(api).await;
        if ok(&now) {
            return begun.elapsed();
        }
        assert!(
            begun.elapsed() < within,
            "{what}: not within {within:?}; shards held: {:?}",
            shares(&now)
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// Every shard held, each by one of `ids`, and each of `ids` holding at most ceil(16 / n).
fn spread_over(ids: &[String]) -> impl Fn(&BTreeMap<String, String>) -> bool + '_ {
    move |now| {
        let most = SHARDS.div_ceil(ids.len());
        let shares = shares(now);
        now.len() == SHARDS
            && now.values().all(|h| ids.contains(h))
            && ids
                .iter()
                .all(|id| (1..=most).contains(&shares.get(id).copied().unwrap_or(0)))
    }
}

pub async fn survivors_take_over_the_shards(set: &HaSet) {
    let ids: Vec<String> = (1..=set.replicas)
        .map(|k| set.controller_identity(k))
        .collect();
    let leases = Api::<Lease>::namespaced(set.client(1).await, "flotilla-system");
    until(
        &leases,
        Duration::from_secs(90),
        "the 16 shards spread over the three replicas' controllers",
        spread_over(&ids),
    )
    .await;

    let victim = ids[VICTIM - 1].clone();
    let survivors: Vec<String> = ids.iter().filter(|id| **id != victim).cloned().collect();
    set.kill(VICTIM);
    let took = until(
        &leases,
        Duration::from_secs(60),
        "the survivors hold every shard of the killed replica",
        |now| now.len() == SHARDS && now.values().all(|h| survivors.contains(h)),
    )
    .await;
    eprintln!("ha: shards of the SIGKILLed replica {VICTIM} owned again by the survivors after {took:.1?} (target 15 s)");
    until(
        &leases,
        Duration::from_secs(60),
        "the survivors split the shards evenly",
        spread_over(&survivors),
    )
    .await;

    set.start(VICTIM);
    until(
        &leases,
        Duration::from_secs(90),
        "replica 2, started again, takes its share back",
        spread_over(&ids),
    )
    .await;
}
