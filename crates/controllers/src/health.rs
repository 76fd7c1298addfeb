//! Cluster health: from Lease heartbeats to the `Ready` condition and taints.
//!
//! An agent (or push worker) renews its cluster's Lease in `flotilla-system` every few seconds
//! and writes `Ready=True`, or `Ready=False` (`MemberUnreachable`) when it runs but cannot reach
//! its member. This controller watches the other side: a joined cluster whose Lease was not
//! renewed within the grace period turns `Ready=Unknown` (`ClusterUnreachable`) and gets the taint
//! `cluster.flotilla.io/unreachable` with the effects NoSchedule and NoExecute; a cluster its
//! agent reports not ready gets `cluster.flotilla.io/not-ready`, the same way. Silence is
//! measured on the hub's clock from when it saw the Lease change ([`heard`]), never from the
//! agent's `renewTime`, so an agent whose clock is off is judged as one whose clock is right. NoSchedule keeps
//! new placements away; NoExecute makes the scheduler move running workloads once their
//! toleration (`serve --failover-toleration`, or the policy's) runs out, counted from the
//! taint's `timeAdded`. Taints are removed once the cluster reports
//! `Ready=True` again. Other taints (set by users) are never touched.

use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::{
    Cluster, Taint, TaintEffect, CONDITION_JOINED, CONDITION_READY, REASON_CLUSTER_UNREACHABLE,
    TAINT_NOT_READY, TAINT_UNREACHABLE,
};
use flotilla_apis::conditions::{self, Set};
use flotilla_apis::names::SYSTEM_NAMESPACE;
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, ResourceExt};
use serde_json::json;

use crate::shards::Shards;

mod heard;

/// Timing of the health controller.
#[derive(Clone, Debug)]
pub struct Options {
    /// A Lease not renewed for this long makes its cluster `Ready=Unknown`.
    pub grace: Duration,
    /// How often every cluster is checked.
    pub check_every: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            grace: Duration::from_secs(40),
            check_every: Duration::from_secs(2),
        }
    }
}

/// Runs until dropped, for the clusters in the shards `shards` owns (key: the cluster's name).
pub async fn run(hub: Client, options: Options, shards: Shards) {
    let (clusters, cluster_writer) = reflector::store();
    let (leases, lease_writer) = reflector::store();
    let cluster_feed = watcher(Api::<Cluster>::all(hub.clone()), watcher::Config::default())
        .default_backoff()
        .modify(lean_cluster)
        .reflect(cluster_writer)
        .for_each(|_| futures::future::ready(()));
    let lease_feed = watcher(
        Api::<Lease>::namespaced(hub.clone(), SYSTEM_NAMESPACE),
        watcher::Config::default(),
    )
    .default_backoff()
    .modify(flotilla_watch::lean::<Lease>)
    .reflect(lease_writer)
    .for_each(|_| futures::future::ready(()));
    let checks = async {
        let mut tick = tokio::time::interval(options.check_every);
        let mut heard = heard::Heard::default();
        loop {
            tick.tick().await;
            heard.retain(|name| clusters.get(&ObjectRef::new(name)).is_some());
            let all = clusters.state();
            for cluster in all {
                let name = cluster.name_any();
                let lease = leases.get(&ObjectRef::new(&name).within(SYSTEM_NAMESPACE));
                let heard_at = heard.observe(&name, lease.as_deref(), Timestamp::now());
                let checked = shards.work(&name, check(&hub, &cluster, heard_at, &options));
                if let Some(Err(e)) = checked.await {
                    tracing::warn!(cluster = %name, error = %e, "cluster health");
                }
            }
        }
    };
    tokio::select! {
        _ = cluster_feed => {},
        _ = lease_feed => {},
        _ = checks => {},
    }
}

/// A Cluster as health judges it: its conditions and taints, without the member's APIs and
/// resources (the bulk of a status, which a thousand clusters would keep here for nothing).
fn lean_cluster(cluster: &mut Cluster) {
    flotilla_watch::lean(cluster);
    cluster.forget_inventory();
}

fn condition<'a>(cluster: &'a Cluster, type_: &str) -> Option<&'a Condition> {
    conditions::find(&cluster.status.as_ref()?.conditions, type_)
}

/// What the cluster's health says its Ready condition and managed taints should be.
#[derive(Debug, PartialEq)]
struct Verdict {
    /// `Some` to overwrite Ready (with Unknown); `None` to leave the agent's word.
    unknown_since: Option<u64>,
    taints: Vec<&'static str>,
}

/// The verdict on a joined `cluster` whose last heartbeat the hub saw at `heard` (its clock).
fn judge(cluster: &Cluster, heard: Timestamp, now: Timestamp, grace: Duration) -> Option<Verdict> {
    let joined = condition(cluster, CONDITION_JOINED)?;
    if joined.status != "True" {
        return None;
    }
    let silent = now.duration_since(heard).as_secs().max(0) as u64;
    if silent > grace.as_secs() {
        return Some(Verdict {
            unknown_since: Some(silent),
            taints: vec![TAINT_UNREACHABLE],
        });
    }
    let taints = match condition(cluster, CONDITION_READY).map(|c| c.status.as_str()) {
        Some("True") => vec![],
        Some("False") => vec![TAINT_NOT_READY],
        // Heartbeats resumed, but the agent has not said Ready yet: keep what is there.
        _ => cluster
            .spec
            .taints
            .iter()
            .filter_map(|t| {
                [TAINT_UNREACHABLE, TAINT_NOT_READY]
                    .into_iter()
                    .find(|k| *k == t.key)
            })
            .collect(),
    };
    Some(Verdict {
        unknown_since: None,
        taints,
    })
}

async fn check(
    hub: &Client,
    cluster: &Cluster,
    heard: Timestamp,
    options: &Options,
) -> crate::Result<()> {
    let name = cluster.name_any();
    let now = Timestamp::now();
    let Some(verdict) = judge(cluster, heard, now, options.grace) else {
        return Ok(());
    };
    let api: Api<Cluster> = Api::all(hub.clone());
    let hub_err = |action: &str, source| crate::Error::Hub {
        action: format!("{action} Cluster {name}"),
        source,
    };
    if let Some(silent) = verdict.unknown_since {
        let ready = condition(cluster, CONDITION_READY);
        if ready.is_none_or(|c| c.status != "Unknown") {
            let mut conditions = cluster
                .status
                .as_ref()
                .map(|s| s.conditions.clone())
                .unwrap_or_default();
            let message = format!(
                "no heartbeat for {silent}s (the agent or push worker stopped renewing the \
                 cluster's Lease)"
            );
            let unknown = Set {
                type_: CONDITION_READY,
                status: "Unknown",
                reason: REASON_CLUSTER_UNREACHABLE,
                message: &message,
            };
            conditions::set(&mut conditions, unknown, now);
            tracing::warn!(cluster = %name, silent_seconds = silent, "cluster unreachable");
            api.patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(&json!({"status": {"conditions": conditions}})),
            )
            .await
            .map_err(|e| hub_err("marking unreachable", e))?;
        }
    }
    let managed = [TAINT_UNREACHABLE, TAINT_NOT_READY];
    let mut taints: Vec<Taint> = cluster
        .spec
        .taints
        .iter()
        .filter(|t| !managed.contains(&t.key.as_str()) || verdict.taints.contains(&t.key.as_str()))
        .cloned()
        .collect();
    // NoSchedule keeps new placements away at once; NoExecute moves running workloads away
    // once the scheduler's failover toleration (or the policy's tolerationSeconds) runs out.
    for key in &verdict.taints {
        for effect in [TaintEffect::NoSchedule, TaintEffect::NoExecute] {
            if !taints.iter().any(|t| t.key == *key && t.effect == effect) {
                taints.push(Taint {
                    key: (*key).to_owned(),
                    value: None,
                    effect,
                    time_added: Some(Time(now)),
                });
            }
        }
    }
    if taints != cluster.spec.taints {
        tracing::info!(cluster = %name, taints = ?verdict.taints, "cluster taints");
        // The whole list is written, computed from the Cluster as this controller last saw
        // it: on the resourceVersion it was computed from, so a taint someone added since (an
        // admin, `flotilla sim` tainting a join request) is not overwritten; a conflict is
        // computed again from the newer Cluster.
        let patch = json!({
            "metadata": {"resourceVersion": cluster.resource_version()},
            "spec": {"taints": taints},
        });
        api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|e| hub_err("tainting", e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
