//! Controllers outside the hub: two replicas run the API server only (`HA_NO_CONTROLLERS=1`),
//! and two `flotilla controllers` processes, `a` on replica 1 and `b` on replica 2, do all the
//! work, sharing it by the 16 shard Leases, for three real member clusters joined in push mode
//! ([`Scene`]). A ledger of every Work event on the hub shows that no Work was written by both.
//!
//! * [`killed`]: `a` is killed with SIGKILL; `b` owns every shard once a's Leases lapse, and a
//!   Deployment created right after still reaches every member within 15 s + normal latency.
//! * [`stalled`]: `a` is stopped (SIGSTOP) past its Leases and resumed: its late writes are
//!   fenced, `b`'s work stands, and the two split the shards again.

mod fleet;
mod killed;
mod procs;
mod stalled;
mod works;

pub use killed::two_processes_and_one_killed;
pub use stalled::a_stalled_process_resumes;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use flotilla_controllers::shards::{binding_key, shard_of};
use flotilla_testkit::Members;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams};
use kube::Client;

use crate::set::HaSet;
use fleet::{cluster_ready, dynamic, everywhere, join, propagate};
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

/// Two API-only replicas, the Work ledger, controllers `a` (on replica 1) and `b` (on
/// replica 2) holding the 16 shards between them, three members joined and Ready, and
/// namespace demo. Dropped in field order: the watch, the processes, then the set.
pub struct Scene {
    pub works: WorkWatch,
    pub procs: Controllers,
    pub leases: Api<Lease>,
    /// Clients of the three members.
    pub members: Vec<Client>,
    pub set: HaSet,
}

impl Scene {
    pub async fn up(members: &Members, tag: &str) -> Scene {
        let set = HaSet::up_with(2, tag, &[("HA_NO_CONTROLLERS", "1")]);
        let mut procs = Controllers::new();
        let hub = set.client(1).await;
        let works = WorkWatch::start(hub.clone()).await;
        procs.start(&set, "a", 1);
        procs.start(&set, "b", 2);
        let leases = Api::<Lease>::namespaced(hub.clone(), "flotilla-system");
        let took = until_split(&leases, Duration::from_secs(60)).await;
        eprintln!(
            "ha controllers: a and b hold the 16 shards after {took:.1?}: {:?}",
            counts(&holders(&leases).await)
        );
        // Three members joined in push mode: the owners of their shards push to them.
        for c in MEMBERS {
            join(&set, c, &members.member(c).expect("member").kubeconfig);
        }
        let clusters = &dynamic(hub, "cluster.flotilla.io", "Cluster", "clusters", None);
        for c in MEMBERS {
            until(
                Duration::from_secs(60),
                &format!("{c} Ready with apps/v1"),
                || cluster_ready(clusters, c),
            )
            .await;
        }
        set.namespace("demo").await;
        Scene {
            works,
            procs,
            leases,
            members: members.clients().await.expect("member clients"),
            set,
        }
    }

    /// Shard → holder now.
    pub async fn holders(&self) -> BTreeMap<u32, String> {
        holders(&self.leases).await
    }

    /// Creates Deployment `name` and its policy through replica `k` and waits until every
    /// member has it; the time that took.
    pub async fn deploy(&self, k: usize, name: &str, within: Duration) -> Duration {
        let begun = Instant::now();
        propagate(&self.set, k, name).await;
        let members = &self.members;
        until(
            within,
            &format!("Deployment {name} in every member"),
            || everywhere(members, name),
        )
        .await;
        begun.elapsed()
    }

    /// Waits until `id` holds all 16 shards; the time that took.
    pub async fn until_all_held_by(&self, id: &str, within: Duration) -> Duration {
        let leases = &self.leases;
        until(
            within,
            &format!("{id} holds all 16 shards"),
            || async move { counts(&holders(leases).await).get(id) == Some(&SHARDS) },
        )
        .await
    }

    /// After 5 s to settle: every Work's history is that of one writer, each Work of the
    /// Deployments named has exactly the generation given (one per spec write asked for), and
    /// no log of a controller process or replica tells of a panic.
    pub async fn judge(&self, generations: &[(&str, i64)]) {
        tokio::time::sleep(Duration::from_secs(5)).await;
        for line in self.works.assert_single_writer() {
            eprintln!("ha controllers: Work {line}");
        }
        for (name, generation) in generations {
            let seen = self.works.works(&format!("/demo.{name}-deployment"));
            assert_eq!(
                seen.len(),
                MEMBERS.len(),
                "Works of {name}: {:?}",
                seen.keys()
            );
            for (work, events) in &seen {
                let last = events.last().expect("an event");
                assert_eq!(
                    last.generation, *generation,
                    "{work}: generation {} (want {generation}): {events:#?}",
                    last.generation
                );
            }
        }
        for name in ["a", "b"] {
            let log = self.procs.log(name);
            assert!(
                panics(&log).is_empty(),
                "controllers {name} panicked: {:?}",
                panics(&log)
            );
        }
        for k in 1..=self.set.replicas {
            let path = self.set.dir.join(format!("replica-{k}/log"));
            let log = std::fs::read_to_string(path).unwrap_or_default();
            assert!(
                panics(&log).is_empty(),
                "replica {k} panicked: {:?}",
                panics(&log)
            );
        }
    }
}

/// Waits until a and b, and only they, hold shards; the time that took.
async fn until_split(leases: &Api<Lease>, within: Duration) -> Duration {
    until(within, "a and b hold the 16 shards", || async move {
        let c = counts(&holders(leases).await);
        c.len() == 2 && c.get("a").is_some_and(|n| *n > 0) && c.get("b").is_some_and(|n| *n > 0)
    })
    .await
}
