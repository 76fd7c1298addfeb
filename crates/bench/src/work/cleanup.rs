//! Cleanup, measured too: the run's Works are deleted on the hub, the agents and the push worker
//! prune their objects from the members and release the Works' finalizers; the phase waits until
//! the hub holds none of them, re-reads the measured agent's memory, and counts what is left of
//! the run in each member (which should be nothing). An empty `bench-work` namespace is then
//! removed from the members; one with leftovers is kept as evidence.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use flotilla_apis::names::execution_namespace;
use flotilla_apis::work::v1alpha1::Work;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{DeleteParams, ListParams};
use kube::Api;

use super::objects::BENCH_NAMESPACE;
use crate::fleet::Fleet;
use crate::procs::{self, Rss};
use crate::progress::Progress;
use crate::track;

/// How long the phase waits for the next Work to go before it gives up on the rest.
const STALL: Duration = Duration::from_secs(120);

/// What cleanup found.
#[derive(Clone, Debug, Default)]
pub struct Cleanup {
    /// Works deleted.
    pub works: usize,
    /// From the delete to the last Work gone; `None` if some never went.
    pub took: Option<Duration>,
    /// Works still on the hub when the phase gave up.
    pub remaining: usize,
    /// The measured agent's memory afterwards.
    pub agent: Option<Rss>,
    /// ConfigMaps of the run left in each member, member-1 first.
    pub left: Vec<(String, usize)>,
}

/// Delete the run's Works and wait for them to go; `agent_pid` is re-measured afterwards.
pub async fn run(
    fleet: &mut Fleet,
    run: &str,
    agent_pid: Option<u32>,
    settle: Duration,
    progress: &Progress,
) -> Result<Cleanup> {
    let selector = track::selector(run);
    let lp = ListParams::default().labels(&selector);
    let all: Api<Work> = Api::all(fleet.client.clone());
    let works = all
        .list_metadata(&lp)
        .await
        .context("listing the run's Works")?
        .items
        .len();
    let phase = progress.phase(
        &format!("cleanup: deleting {works} Works; the members prune their objects"),
        works as u64,
    );
    let started = Instant::now();
    for m in &fleet.members {
        let api: Api<Work> = Api::namespaced(fleet.client.clone(), &execution_namespace(&m.name));
        api.delete_collection(&DeleteParams::default(), &lp)
            .await
            .with_context(|| format!("deleting the run's Works of {}", m.name))?;
    }
    let mut last = (works, Instant::now());
    let remaining = loop {
        fleet.check_alive()?;
        let left = all.list_metadata(&lp).await?.items.len();
        phase.bar().set_position((works - left.min(works)) as u64);
        if left != last.0 {
            last = (left, Instant::now());
        }
        if left == 0 || last.1.elapsed() > STALL {
            break left;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let took = (remaining == 0).then(|| started.elapsed());
    phase.done(&match remaining {
        0 => format!("all {works} Works gone"),
        n => format!("{n} of {works} Works still on the hub"),
    });
    let agent = match agent_pid {
        Some(pid) => {
            tokio::time::sleep(settle).await;
            Some(procs::rss(pid)?)
        }
        None => None,
    };

    let mut left = Vec::new();
    for m in &fleet.members {
        let cms: Api<ConfigMap> = Api::namespaced(m.client.clone(), BENCH_NAMESPACE);
        let n = cms
            .list_metadata(&lp)
            .await
            .with_context(|| format!("counting the run's ConfigMaps left in {}", m.name))?
            .items
            .len();
        if n == 0 {
            let namespaces: Api<Namespace> = Api::all(m.client.clone());
            if let Err(e) = namespaces
                .delete(BENCH_NAMESPACE, &DeleteParams::default())
                .await
            {
                if !matches!(&e, kube::Error::Api(s) if s.code == 404) {
                    progress.note(&format!(
                        "warning: could not delete the namespace {BENCH_NAMESPACE} in {}: {e}",
                        m.name
                    ));
                }
            }
        } else {
            progress.note(&format!(
                "{}: {n} ConfigMaps of this run are left in {BENCH_NAMESPACE}; kept for a look",
                m.name
            ));
        }
        left.push((m.name.clone(), n));
    }
    Ok(Cleanup {
        works,
        took,
        remaining,
        agent,
        left,
    })
}
