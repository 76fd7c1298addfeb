//! The change phase: how long a template change takes to be applied in all its clusters, with
//! the whole fleet joined and loaded. N changes are made at a fixed rate (open loop) to K of the
//! load phase's Deployments, each raising the template's sequence annotation (change `i` goes
//! to template `i mod K`); each is timed from the hub's answer to the write until a watch on
//! every cluster of its binding has shown that number or a later one.
//!
//! The K templates come from the first few placement groups, so the watches (one per cluster,
//! each with the cluster's own kubeconfig) stay few; the hub serves and delivers for the whole
//! fleet all the same.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use k8s_openapi::api::apps::v1::Deployment;
use kube::Api;

use super::divided::{self, Load};
use super::fleet::SimFleet;
use crate::open_loop::OpenLoop;
use crate::progress::Progress;
use crate::propagation::latency::judge;
use crate::propagation::objects::Raiser;
use crate::stats::{self, Summary};
use crate::track::{self, Key, Tracker};

/// Templates are taken from this many placement groups.
const GROUPS: usize = 10;
/// A change not seen in all its clusters within this long of its write counts as not seen.
pub const TIMEOUT: Duration = Duration::from_secs(30);
/// How long the wait goes on without another change seen before the rest is given up.
const STALL: Duration = Duration::from_secs(60);

/// What the phase measured.
#[derive(Clone, Debug, Default)]
pub struct Changes {
    /// Templates changed.
    pub templates: usize,
    /// Clusters watched (all those templates' clusters).
    pub clusters: usize,
    /// Changes made.
    pub changes: usize,
    /// Offered changes per second.
    pub rate: u64,
    /// Write returned → shown in every cluster of the template.
    pub all: Option<Summary>,
    /// Writes that failed, with the first error.
    pub write_errors: (usize, Option<String>),
    /// Changes not seen in all their clusters within [`TIMEOUT`].
    pub not_seen: usize,
    /// The hub's CPU seconds from the first change to the last seen (or given up): less noisy
    /// than the latency at a rate near what the hub can take, where a queue forms or not.
    pub hub_cpu: f64,
}

impl Changes {
    /// The hub's CPU per change made, in milliseconds.
    pub fn hub_cpu_per_change_ms(&self) -> f64 {
        self.hub_cpu * 1000.0 / self.changes.max(1) as f64
    }
}

/// A change that returned.
struct Written {
    key: Key,
    seq: u64,
    at: Instant,
}

/// Run the phase on the Deployments of `load` in `ns`: `changes` changes at `rate` per second
/// over `templates` templates, after skipping `skip` of those the phase would take first.
#[allow(clippy::too_many_arguments)]
pub async fn run(
    set: &mut SimFleet,
    run: &str,
    ns: &str,
    load: &Load,
    (skip, templates): (usize, usize),
    changes: usize,
    rate: u64,
    progress: &Progress,
) -> Result<Changes> {
    let chosen: Vec<(Key, Vec<String>)> = (0..load.deployments)
        .filter(|i| i % load.groups < GROUPS)
        .skip(skip)
        .take(templates)
        .filter_map(|i| {
            let key = format!("{ns}/{}", divided::name(run, i));
            let clusters = load.placed.get(&key)?.clone();
            (!clusters.is_empty()).then_some((key, clusters))
        })
        .collect();
    if chosen.is_empty() {
        bail!("no Deployment of the load phase is placed in any cluster");
    }
    let watched: BTreeSet<&String> = chosen.iter().flat_map(|(_, c)| c).collect();
    let phase = progress.phase(
        &format!(
            "changes: watching {} clusters, then {changes} changes at {rate}/s over {} \
             templates, until in all their clusters",
            watched.len(),
            chosen.len()
        ),
        changes as u64,
    );
    let trackers: BTreeMap<String, Tracker> =
        futures::future::try_join_all(watched.iter().map(|c| watch(set, ns, run, c)))
            .await?
            .into_iter()
            .collect();
    let hub: Api<Deployment> = Api::namespaced(set.client.clone(), ns);
    let writes = OpenLoop::new();
    let raiser = Raiser::new(hub.clone(), chosen.iter().map(|(k, _)| k.clone()));
    let send = writes.send(changes, rate, Instant::now(), |i| {
        let (key, seq, raise) = raiser.raise(i);
        async move {
            raise.await?;
            Ok(Written {
                key,
                seq,
                at: Instant::now(),
            })
        }
    });
    let clusters_of: BTreeMap<&Key, &Vec<String>> = chosen.iter().map(|(k, c)| (k, c)).collect();
    let cpu_before = crate::procs::cpu::own(set.hub.pid());
    // When write `w` was shown in every cluster of its template.
    let shown = |w: &Written| -> Option<Instant> {
        let key = format!("{}@{}", w.key, w.seq);
        let mut latest = w.at;
        for c in *clusters_of.get(&w.key)? {
            latest = latest.max(trackers.get(c)?.met_at(&key)?);
        }
        Some(latest)
    };
    let wait = async {
        let mut last = (0, Instant::now());
        loop {
            set.check_alive()?;
            let seen = writes.map(|w| shown(w).is_some());
            let met = seen.iter().filter(|s| **s).count();
            phase.bar().set_position(met as u64);
            if met != last.0 {
                last = (met, Instant::now());
            }
            if !writes.sending() && (met == seen.len() || last.1.elapsed() > STALL) {
                return anyhow::Ok(());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let (_, waited) = tokio::join!(send, wait);
    waited?;
    let hub_cpu = (crate::procs::cpu::own(set.hub.pid()) - cpu_before).max(0.0);
    let (written, write_errors) = writes.take();
    let all: Vec<Duration> = written
        .iter()
        .filter_map(|w| shown(w).map(|at| at.saturating_duration_since(w.at)))
        .collect();
    let not_seen = written.len() - all.iter().filter(|d| **d <= TIMEOUT).count();
    let measured = Changes {
        templates: chosen.len(),
        clusters: trackers.len(),
        changes,
        rate,
        all: stats::summarize(all),
        write_errors,
        not_seen,
        hub_cpu,
    };
    phase.done(&match &measured.all {
        Some(s) => format!(
            "{} of {} in all their clusters; p50 {}, p99 {} (the hub's CPU {:.1} ms per change)",
            s.count,
            written.len(),
            stats::ms(s.p50),
            stats::ms(s.p99),
            measured.hub_cpu_per_change_ms()
        ),
        None => format!("none of {} seen in all its clusters", written.len()),
    });
    Ok(measured)
}

/// A watch on the run's Deployments in namespace `ns` of simulated cluster `name`.
async fn watch(set: &SimFleet, ns: &str, run: &str, name: &str) -> Result<(String, Tracker)> {
    let api: Api<Deployment> = Api::namespaced(set.member(name).await?, ns);
    let t = Tracker::start_keyed(api, &track::selector(run), judge)
        .await
        .with_context(|| format!("watching the Deployments in {name}"))?;
    Ok((name.to_string(), t.named(name)))
}
