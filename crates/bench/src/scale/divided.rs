//! The load phase: M Deployments Divided over the simulated fleet, each over 3 to 10 clusters.
//!
//! The clusters are cut into placement groups of 3–10 (`3 + g mod 8`) consecutive clusters,
//! one starting every third cluster, so together they cover the fleet; group `g` gets a
//! PropagationPolicy that selects the Deployments labelled with it and divides their replicas
//! (Weighted, equal weights) over its clusters by name. Deployment `i` is in group `i mod G`. A
//! spread constraint would not do: with equal scores it picks the same first clusters for every
//! Deployment, which measures one corner of the fleet.
//!
//! The Deployments are created by a few concurrent clients and timed until every binding is
//! `FullyApplied`; the Works applied per second are the bindings' clusters over that time. The
//! hub's memory is read after a settle.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use flotilla_apis::work::v1alpha1::ResourceBinding;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{ApiResource, DynamicObject, ListParams, PostParams};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use super::fleet::SimFleet;
use crate::figures::thousands;
use crate::fleet::FLOTILLA;
use crate::procs::Rss;
use crate::progress::Progress;
use crate::propagation::memory::{create_and_wait, fully_applied, SETTLE};
use crate::propagation::objects;
use crate::track::{Key, Tracker};

/// The label that puts a Deployment in a placement group.
pub const GROUP_LABEL: &str = "bench.flotilla.io/group";

/// The placement groups of a fleet of `clusters` named `m-1` … `m-N`: each a list of names.
pub fn groups(clusters: usize) -> Vec<Vec<String>> {
    // A group starts every 3 clusters and holds at least 3, so together they cover the fleet;
    // a cluster is in about two groups.
    let count = clusters.div_ceil(3).max(1);
    (0..count)
        .map(|g| {
            let size = (3 + g % 8).min(clusters);
            let start = 3 * g;
            (0..size)
                .map(|k| format!("m-{}", 1 + (start + k) % clusters))
                .collect()
        })
        .collect()
}

/// The PropagationPolicy of group `g`: its Deployments Divided over `clusters`. The fleet's
/// GPU clusters are tainted `dedicated=gpu:NoSchedule`; the policies tolerate that (and nothing
/// else, so failover still moves workloads off an unreachable cluster).
fn policy(kind: &ApiResource, ns: &str, g: usize, clusters: &[String]) -> Result<DynamicObject> {
    serde_json::from_value(json!({
        "apiVersion": kind.api_version,
        "kind": kind.kind,
        "metadata": {"name": format!("group-{g}"), "namespace": ns},
        "spec": {
            "resourceSelectors": [{
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "labelSelector": {"matchLabels": {GROUP_LABEL: g.to_string()}},
            }],
            "placement": {
                "clusterAffinity": {"clusterNames": clusters},
                "clusterTolerations": [
                    {"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}
                ],
                "replicaScheduling": {
                    "replicaSchedulingType": "Divided",
                    "replicaDivisionPreference": "Weighted",
                },
            },
        },
    }))
    .context("building a PropagationPolicy")
}

/// The name of Deployment `i`.
pub fn name(run: &str, i: usize) -> String {
    format!("{run}-d-{i:05}")
}

/// What the phase measured.
#[derive(Clone, Debug)]
pub struct Load {
    /// Deployments created.
    pub deployments: usize,
    /// Replicas of each.
    pub replicas: i32,
    /// Placement groups (= policies).
    pub groups: usize,
    /// From the first create to the last create returned.
    pub creates_took: Duration,
    /// From the first create to the last binding seen FullyApplied.
    pub took: Duration,
    /// Bindings not FullyApplied when the wait ended, and up to 5 with why.
    pub not_applied: (usize, Vec<String>),
    /// The hub's memory once they were (after a settle).
    pub hub: Rss,
    /// CPU seconds the hub spent from the first create to the last FullyApplied.
    pub hub_cpu: f64,
    /// Where each Deployment landed: its key → the clusters of its binding.
    pub placed: BTreeMap<Key, Vec<String>>,
}

impl Load {
    /// Works of the bindings: the clusters they list.
    pub fn works(&self) -> usize {
        works(&self.placed)
    }

    /// The hub's CPU per Work applied, in milliseconds: what bounds Works/s on a machine
    /// whose cores are all busy (less noisy than the rate itself).
    pub fn hub_cpu_per_work_ms(&self) -> f64 {
        self.hub_cpu * 1000.0 / self.works().max(1) as f64
    }

    /// Works applied per second, from the first create.
    pub fn works_per_second(&self) -> f64 {
        self.works() as f64 / self.took.as_secs_f64().max(1e-3)
    }
}

/// Run the phase in namespace `ns` (which it creates): `n` Deployments of `replicas`.
pub async fn run(
    set: &mut SimFleet,
    run: &str,
    ns: &str,
    n: usize,
    replicas: i32,
    progress: &Progress,
) -> Result<Load> {
    let kind = FLOTILLA.policy();
    let groups = groups(set.clusters());
    let first = policy(&kind, ns, 0, &groups[0])?;
    objects::setup(&set.client, run, ns, &kind, &first).await?;
    let policies = Api::<DynamicObject>::namespaced_with(set.client.clone(), ns, &kind);
    for (g, clusters) in groups.iter().enumerate().skip(1) {
        policies
            .create(&PostParams::default(), &policy(&kind, ns, g, clusters)?)
            .await
            .with_context(|| format!("creating the policy of group {g} on the hub"))?;
    }
    let bindings = Tracker::start_keyed(
        Api::<DynamicObject>::namespaced_with(set.client.clone(), ns, &FLOTILLA.binding()),
        "",
        fully_applied,
    )
    .await
    .context("watching the bindings on the hub")?;
    let keys: Vec<Key> = (0..n).map(|i| format!("{ns}/{}", name(run, i))).collect();
    let phase = progress.phase(
        &format!(
            "load: {} Deployments of {replicas} replicas Divided over {} groups of 3-10 \
             clusters, until every binding is FullyApplied",
            thousands(n as u64),
            groups.len()
        ),
        n as u64,
    );
    let started = Instant::now();
    let cpu_before = crate::procs::cpu::own(set.hub.pid());
    let hub: Api<Deployment> = Api::namespaced(set.client.clone(), ns);
    let count = groups.len();
    let build = |i: usize| {
        let mut d = objects::deployment(run, ns, &name(run, i), replicas)?;
        d.labels_mut()
            .insert(GROUP_LABEL.into(), (i % count).to_string());
        Ok(d)
    };
    let (creates_took, waited) =
        create_and_wait(&hub, n, build, &bindings, &keys, phase.bar(), || {
            set.check_alive()
        })
        .await?;
    let took = started.elapsed();
    let hub_cpu = (crate::procs::cpu::own(set.hub.pid()) - cpu_before).max(0.0);
    drop(bindings);
    let placed = placements(&set.client, ns).await?;
    phase.done(&format!(
        "{} of {} FullyApplied, {} Works ({:.0} Works/s; the hub's CPU {:.1} ms per Work)",
        thousands(waited.met as u64),
        thousands(n as u64),
        thousands(works(&placed) as u64),
        works(&placed) as f64 / took.as_secs_f64().max(1e-3),
        hub_cpu * 1000.0 / works(&placed).max(1) as f64
    ));
    tokio::time::sleep(SETTLE).await;
    set.check_alive()?;
    Ok(Load {
        deployments: n,
        replicas,
        groups: count,
        creates_took,
        took,
        not_applied: (n - waited.met, waited.missing),
        hub: crate::procs::rss(set.hub.pid())?,
        hub_cpu,
        placed,
    })
}

/// The Works of `placed` bindings: the clusters they list.
fn works(placed: &BTreeMap<Key, Vec<String>>) -> usize {
    placed.values().map(Vec::len).sum()
}

/// Each binding of namespace `ns`: its template's key → the clusters it lists.
pub async fn placements(hub: &Client, ns: &str) -> Result<BTreeMap<Key, Vec<String>>> {
    let list = Api::<ResourceBinding>::namespaced(hub.clone(), ns)
        .list(&ListParams::default())
        .await
        .context("listing the bindings on the hub")?;
    Ok(list
        .items
        .into_iter()
        .map(|b| {
            let key = format!("{ns}/{}", b.spec.resource.name);
            let clusters = b.spec.clusters.into_iter().map(|c| c.name).collect();
            (key, clusters)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::groups;

    #[test]
    fn groups_cover_the_fleet_with_3_to_10_clusters_each() {
        for n in [1, 3, 20, 100, 1000, 10_000] {
            let gs = groups(n);
            let mut seen = std::collections::HashSet::new();
            for g in &gs {
                assert!(
                    g.len() <= 10 && (g.len() >= 3 || g.len() == n),
                    "{n}: {g:?}"
                );
                let distinct: std::collections::HashSet<_> = g.iter().collect();
                assert_eq!(distinct.len(), g.len(), "{n}: a group repeats a cluster");
                seen.extend(g.iter().cloned());
            }
            assert_eq!(seen.len(), n, "{n} clusters, {} covered", seen.len());
            assert!(seen.iter().all(|c| {
                let k: usize = c.trim_start_matches("m-").parse().unwrap();
                (1..=n).contains(&k)
            }));
        }
    }
}
