//! The voter side of quorum health voting.
//!
//! The hub writes the endpoints a voter must probe into the spec of the HealthReport
//! `endpoints` in the voter's execution namespace. [`run`] probes each of them every
//! `intervalSeconds` (from [`Options::source`] when given), turns its results into an opinion
//! per endpoint with the failure and success thresholds, and writes the opinions to the
//! report's status: at once when one changes, and at least once per shortest interval
//! otherwise, so the hub can tell a live voter from a stale one.

mod check;
mod opinion;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashSet};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use flotilla_apis::names::execution_namespace;
use flotilla_apis::networking::v1alpha1::{
    HealthReport, ProbeResult, ProbeTarget, HEALTH_REPORT_NAME,
};
use futures::StreamExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::watcher;
use kube::Client;
use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::hub_watch::HubWatches;

pub use check::{probe, Check};
pub use opinion::Opinion;

/// How a voter probes.
#[derive(Clone, Debug)]
pub struct Options {
    /// The source address of the probes (`--probe-source`); the system's choice when absent.
    pub source: Option<IpAddr>,
    /// Probes in flight at most.
    pub concurrency: usize,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            source: None,
            concurrency: 64,
        }
    }
}

/// How often the loop looks for due probes.
const TICK: Duration = Duration::from_millis(100);
/// A failed status write is retried at most this often.
const RETRY: Duration = Duration::from_secs(1);

/// An endpoint as the voter keys it.
type Key = (String, String, String, String, u16);

fn key_of(t: &ProbeTarget) -> Key {
    (
        t.namespace.clone(),
        t.name.clone(),
        t.cluster.clone(),
        t.address.clone(),
        t.port,
    )
}

struct Tracked {
    target: ProbeTarget,
    opinion: Opinion,
    due: Instant,
    in_flight: bool,
}

/// Votes for `cluster` until the hub cannot be watched any more (it retries with backoff, so
/// in practice: until dropped).
pub async fn run(hub: Client, cluster: &str, options: Options, watches: &HubWatches) {
    let ns = execution_namespace(cluster);
    let mut events = watches.health(&hub, &ns);
    let api: Api<HealthReport> = Api::namespaced(hub, &ns);
    let (tx, mut targets) = watch::channel(Vec::<ProbeTarget>::new());
    let watching = tokio::spawn(async move {
        while let Some(event) = events.next().await {
            match event {
                Ok(watcher::Event::Apply(r) | watcher::Event::InitApply(r)) => {
                    let _ = tx.send(r.spec.targets);
                }
                Ok(watcher::Event::Delete(_)) => {
                    let _ = tx.send(Vec::new());
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "watching the HealthReport"),
            }
        }
    });
    let _stop_watching = AbortOnDrop(watching);
    let mut tracked: BTreeMap<Key, Tracked> = BTreeMap::new();
    let mut probes: JoinSet<(Key, Result<(), String>)> = JoinSet::new();
    let mut dirty = false;
    let mut last_write: Option<Instant> = None;
    let mut last_attempt: Option<Instant> = None;
    let mut tick = tokio::time::interval(TICK);
    // After a spell with nothing to probe, carry on from now rather than make up the ticks.
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    tracing::info!(%cluster, source = ?options.source, "voting on the health of fleet service endpoints");
    loop {
        tokio::select! {
            // Only while there is something to probe: a thousand push workers' voters ticking
            // ten times a second with no targets kept an idle hub busy.
            _ = tick.tick(), if !tracked.is_empty() => {}
            changed = targets.changed() => {
                if changed.is_err() {
                    return;
                }
                dirty |= follow(&mut tracked, &targets.borrow_and_update());
            }
            Some(done) = probes.join_next(), if !probes.is_empty() => {
                if let Ok((key, result)) = done {
                    if let Some(t) = tracked.get_mut(&key) {
                        t.in_flight = false;
                        dirty |= t.opinion.observe(
                            result,
                            t.target.failure_threshold,
                            t.target.success_threshold,
                            Time(Timestamp::now()),
                        );
                    }
                }
                continue;
            }
        }
        let now = Instant::now();
        for (key, t) in tracked.iter_mut() {
            if t.in_flight || t.due > now || probes.len() >= options.concurrency {
                continue;
            }
            t.in_flight = true;
            t.due = now + Duration::from_secs(t.target.interval_seconds.max(1).into());
            let Some(check) = check_of(&t.target) else {
                continue;
            };
            let (key, source) = (key.clone(), options.source);
            probes.spawn(async move { (key, probe(&check, source).await) });
        }
        let heartbeat = tracked
            .values()
            .map(|t| t.target.interval_seconds.max(1))
            .min()
            .map(|s| Duration::from_secs(s.into()));
        let stale = match (heartbeat, last_write) {
            (Some(every), Some(at)) => now.duration_since(at) >= every,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let may_try = last_attempt.is_none_or(|at| now.duration_since(at) >= RETRY);
        if (dirty || stale) && may_try && tracked.values().any(|t| t.opinion.up.is_some()) {
            last_attempt = Some(now);
            match write(&api, &tracked).await {
                Ok(()) => {
                    dirty = false;
                    last_write = Some(now);
                    last_attempt = None;
                }
                Err(e) => tracing::warn!(%cluster, error = %e, "writing the HealthReport status"),
            }
        }
    }
}

/// Follows the spec's targets: new ones are probed at once, gone ones are forgotten, changed
/// check settings apply from the next probe. Returns whether an opinion left.
fn follow(tracked: &mut BTreeMap<Key, Tracked>, targets: &[ProbeTarget]) -> bool {
    let keys: HashSet<Key> = targets.iter().map(key_of).collect();
    let before = tracked.len();
    tracked.retain(|k, _| keys.contains(k));
    let removed = tracked.len() != before;
    for target in targets {
        tracked
            .entry(key_of(target))
            .and_modify(|t| t.target = target.clone())
            .or_insert_with(|| Tracked {
                target: target.clone(),
                opinion: Opinion::default(),
                due: Instant::now(),
                in_flight: false,
            });
    }
    removed
}

fn check_of(t: &ProbeTarget) -> Option<Check> {
    let ip: IpAddr = match t.address.parse() {
        Ok(ip) => ip,
        Err(_) => {
            tracing::warn!(address = %t.address, "a probe target that is no IP address");
            return None;
        }
    };
    Some(Check {
        addr: SocketAddr::new(ip, t.port),
        protocol: t.protocol,
        path: t.path.clone().unwrap_or_else(|| "/".into()),
        timeout: Duration::from_secs(t.timeout_seconds.max(1).into()),
    })
}

/// Writes every opinion to the report's status (a merge patch replaces the lists whole).
async fn write(api: &Api<HealthReport>, tracked: &BTreeMap<Key, Tracked>) -> kube::Result<()> {
    let results: Vec<ProbeResult> = tracked
        .values()
        .filter_map(|t| {
            Some(ProbeResult {
                namespace: t.target.namespace.clone(),
                name: t.target.name.clone(),
                cluster: t.target.cluster.clone(),
                address: t.target.address.clone(),
                port: t.target.port,
                up: t.opinion.up?,
                since: t.opinion.since.clone(),
                message: t.opinion.message.clone(),
            })
        })
        .collect();
    let down = results.iter().filter(|r| !r.up).count();
    let patch = json!({"status": {
        "reportTime": Time(Timestamp::now()),
        "targets": tracked.len(),
        "down": down,
        "results": results,
    }});
    // The report sent back (every result again) is not read.
    flotilla_watch::quiet::patch(
        api,
        HEALTH_REPORT_NAME,
        Some("status"),
        &PatchParams {
            field_manager: Some("flotilla-agent".into()),
            ..PatchParams::default()
        },
        &Patch::Merge(&patch),
    )
    .await
    .map(drop)
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
