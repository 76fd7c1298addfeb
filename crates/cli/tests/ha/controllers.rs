//! Controllers outside the hub: two replicas run the API server only (`HA_NO_CONTROLLERS=1`),
//! and two `flotilla controllers` processes, `a` on replica 1 and `b` on replica 2, do all the
//! work, sharing it by the 16 shard Leases, for three real member clusters joined in push mode.
//! A Deployment propagates to every member; `a` is killed with SIGKILL; `b` owns every shard
//! within its Leases' lapse plus a round, a Deployment created afterwards still reaches every
//! member within 15 s + normal latency, and the ledger of every Work event on the hub shows no
//! Work written by both processes.

mod fleet;
mod procs;
mod works;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use flotilla_controllers::shards::{binding_key, shard_of};
use flotilla_testkit::Members;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams};

use crate::set::HaSet;
use fleet::{cluster_ready, dynamic, everywhere, image_everywhere, join, propagate, set_image};
use procs::Controllers;
use works::WorkWatch;

const FLOTILLA: &str = env!("CARGO_BIN_EXE_flotilla");
const MEMBERS: [&str; 3] = ["member-1", "member-2", "member-3"];
const SHARDS: usize = 16;

/// Polls `probe` every 250 ms until it is true; the time it took, or a panic naming `what`.
async fn until<F: std::future::Future<Output = bool>>(
    within: Duration,
    what: &str,
    mut probe: impl FnMut() -> F,
) -> Duration {
    let begun = Instant::now();
    while !probe().await {
        assert!(begun.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    begun.elapsed()
}

/// Holder of each shard (its number → holderIdentity, "" when none).
async fn holders(leases: &Api<Lease>) -> BTreeMap<u32, String> {
    let list = leases
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .unwrap_or_default();
    list.into_iter()
        .filter_map(|lease| {
            let shard = lease
                .metadata
                .name?
                .strip_prefix("flotilla-shard-")?
                .parse()
                .ok()?;
            let holder = lease.spec.and_then(|s| s.holder_identity);
            Some((shard, holder.unwrap_or_default()))
        })
        .collect()
}

/// How many shards each identity holds.
fn counts(holders: &BTreeMap<u32, String>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for h in holders.values() {
        *out.entry(h.clone()).or_insert(0) += 1;
    }
    out
}

/// The shard of Deployment `name`'s binding (and of its Works) in namespace demo.
fn shard_of_deployment(name: &str) -> u32 {
    shard_of(&binding_key(Some("demo"), &format!("{name}-deployment")))
}

/// The first `web-N`, N > `after`, whose Works belong to a shard `holder` holds.
fn name_held_by(holders: &BTreeMap<u32, String>, holder: &str, after: u32) -> (u32, String) {
    (after + 1..)
        .map(|n| (n, format!("web-{n}")))
        .find(|(_, name)| {
            holders.get(&shard_of_deployment(name)).map(String::as_str) == Some(holder)
        })
        .expect("a name on one of a's shards")
}

/// How many shards the last "owned shards changed" line of a controllers log lists.
fn last_owned(log: &str) -> Option<usize> {
    let line = log.lines().rfind(|l| l.contains("owned shards changed"))?;
    // Without the terminal colours, should there be any.
    let mut plain = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            chars.by_ref().find(|c| c.is_ascii_alphabetic());
        } else {
            plain.push(c);
        }
    }
    let list = plain.split("shards=[").nth(1)?.split(']').next()?;
    Some(list.split(',').filter(|s| !s.trim().is_empty()).count())
}

/// Lines of `log` that tell of a panic.
fn panics(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains("panicked")).collect()
}

pub async fn two_processes_and_one_killed(members: &Members) {
    let set = HaSet::up_with(2, "controllers", &[("HA_NO_CONTROLLERS", "1")]);
    let mut procs = Controllers::new();
    let hub = set.client(1).await;
    let works = WorkWatch::start(hub.clone()).await;
    procs.start(&set, "a", 1);
    procs.start(&set, "b", 2);

    // (1) a and b hold all 16 shards between them.
    let leases = &Api::<Lease>::namespaced(hub.clone(), "flotilla-system");
    let took = until(
        Duration::from_secs(60),
        "a and b hold the 16 shards",
        || async move {
            let c = counts(&holders(leases).await);
            c.len() == 2 && c.get("a").is_some_and(|n| *n > 0) && c.get("b").is_some_and(|n| *n > 0)
        },
    )
    .await;
    let before = holders(leases).await;
    eprintln!(
        "ha controllers: a and b hold the 16 shards after {took:.1?}: {:?}",
        counts(&before)
    );
    // Both Deployments belong to shards of a, so b has to take them over.
    let (n, first) = name_held_by(&before, "a", 0);
    let (_, second) = name_held_by(&before, "a", n);
    let pushed_by_a: Vec<&str> = MEMBERS
        .into_iter()
        .filter(|c| before.get(&shard_of(c)).map(String::as_str) == Some("a"))
        .collect();
    eprintln!(
        "ha controllers: {first} (shard {}) and {second} (shard {}) are a's; a pushes to {pushed_by_a:?}",
        shard_of_deployment(&first),
        shard_of_deployment(&second)
    );

    // Three members joined in push mode: the owners of their shards push to them.
    for c in MEMBERS {
        join(&set, c, &members.member(c).expect("member").kubeconfig);
    }
    let clusters = &dynamic(
        hub.clone(),
        "cluster.flotilla.io",
        "Cluster",
        "clusters",
        None,
    );
    for c in MEMBERS {
        until(
            Duration::from_secs(60),
            &format!("{c} Ready with apps/v1"),
            || cluster_ready(clusters, c),
        )
        .await;
    }
    set.namespace("demo").await;
    let member_clients = &members.clients().await.expect("member clients");

    // (2) A Deployment and a policy for every member propagate.
    let begun = Instant::now();
    propagate(&set, 1, &first).await;
    until(
        Duration::from_secs(60),
        "the first Deployment in every member",
        || everywhere(member_clients, &first),
    )
    .await;
    eprintln!(
        "ha controllers: {first} in every member after {:.1?}",
        begun.elapsed()
    );
    let still = holders(leases).await;
    assert_eq!(
        still.get(&shard_of_deployment(&first)).map(String::as_str),
        Some("a"),
        "the first Deployment's shard moved before a was killed: {still:?}"
    );

    // (3) SIGKILL of a.
    procs.kill("a");
    let killed = Instant::now();
    // (4) A second Deployment and policy, made at once, reach every member within 15 s + normal
    // latency.
    propagate(&set, 2, &second).await;
    let took = until(
        Duration::from_secs(45),
        "the second Deployment in every member after a was killed",
        || everywhere(member_clients, &second),
    )
    .await;
    let reached = killed.elapsed();
    eprintln!("ha controllers: {second} in every member {reached:.1?} after SIGKILL of a ({took:.1?} after its create; bound 45 s)");
    // The fencing path: b holds every shard (a's Leases lapsed: 10 s, plus a round).
    until(
        Duration::from_secs(30),
        "b holds all 16 shards after a was killed",
        || async move { counts(&holders(leases).await).get("b") == Some(&SHARDS) },
    )
    .await;
    eprintln!(
        "ha controllers: b holds all 16 shards {:.1?} after SIGKILL of a (when first seen)",
        killed.elapsed()
    );
    assert_eq!(
        last_owned(&procs.log("b")),
        Some(SHARDS),
        "b's log does not tell of it owning all 16 shards:\n{}",
        procs.tails()
    );
    assert!(
        everywhere(member_clients, &first).await,
        "{first} left a member after the takeover"
    );
    // b, now the owner, carries an edit of the first Deployment out.
    let begun = Instant::now();
    set_image(&set, 2, &first, "nginx:1.28").await;
    until(
        Duration::from_secs(30),
        "the edit of the first Deployment in every member",
        || image_everywhere(member_clients, &first, "nginx:1.28"),
    )
    .await;
    eprintln!(
        "ha controllers: the edit of {first} in every member after {:.1?}",
        begun.elapsed()
    );

    // (5) No Work written by both: settle, then judge every Work's history.
    tokio::time::sleep(Duration::from_secs(5)).await;
    for line in works.assert_single_writer() {
        eprintln!("ha controllers: Work {line}");
    }
    // Exactly the spec writes asked for: one per Work of the second Deployment, two (create,
    // edit) per Work of the first; a's writes and b's re-reconcile of a's shards on takeover
    // made no extra generation.
    for (name, generation) in [(&first, 2), (&second, 1)] {
        let seen = works.works(&format!("/demo.{name}-deployment"));
        assert_eq!(
            seen.len(),
            MEMBERS.len(),
            "Works of {name}: {:?}",
            seen.keys()
        );
        for (work, events) in &seen {
            let last = events.last().expect("an event");
            assert_eq!(
                last.generation, generation,
                "{work}: generation {} (want {generation}): {events:#?}",
                last.generation
            );
        }
    }
    for name in ["a", "b"] {
        let log = procs.log(name);
        assert!(
            panics(&log).is_empty(),
            "controllers {name} panicked: {:?}",
            panics(&log)
        );
    }
    for k in 1..=set.replicas {
        let log =
            std::fs::read_to_string(set.dir.join(format!("replica-{k}/log"))).unwrap_or_default();
        assert!(
            panics(&log).is_empty(),
            "replica {k} panicked: {:?}",
            panics(&log)
        );
    }
    drop(procs);
    drop(set);
}
