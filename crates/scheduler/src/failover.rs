//! Failover and failback on top of [`schedule`].
//!
//! Failover is the scheduler's ordinary work: a cluster the binding runs in whose `NoExecute`
//! taint is no longer tolerated fails [`filter::execution`] and loses its share. [`evicted`]
//! names those clusters, so the caller can evict gracefully and remember them.
//!
//! Failback: scheduling keeps a running placement where it is, so a recovered cluster gets
//! nothing back by itself. [`failback`] compares the kept decision with a fresh one
//! (`rebalance`); when the fresh one puts the object back into clusters it failed over from,
//! and each of them has been `Ready` for the whole stable period, the fresh decision is taken.
//! A cluster that goes up and down restarts its stable period every time it turns Ready, so a
//! flapping cluster never gets workloads back.

#[cfg(test)]
mod tests;

use std::borrow::Borrow;
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::Cluster;
use k8s_openapi::jiff::Timestamp;

use crate::filter;
use crate::framework::{name, schedule, Decision, Eviction, Request};
use flotilla_apis::cluster::v1alpha1::CONDITION_READY;

/// The clusters the binding runs in (`req.current`) that `decision` leaves because their
/// `NoExecute` taint is no longer tolerated, with the replicas each had. A cluster that is
/// gone from the registry, or left for another reason (the policy changed), is not evicted.
pub fn evicted<C: Borrow<Cluster>>(
    req: &Request<'_>,
    decision: &Decision,
    clusters: &[C],
    eviction: Eviction,
) -> Vec<(String, u32)> {
    if decision.error.is_some() {
        return Vec::new();
    }
    req.current
        .iter()
        .filter(|(c, _)| !decision.clusters.iter().any(|a| a.cluster == *c))
        .filter(|(c, _)| {
            clusters
                .iter()
                .map(Borrow::borrow)
                .find(|k| name(k) == c)
                .is_some_and(|k| {
                    filter::execution(&req.placement.cluster_tolerations, k, Some(eviction))
                        .is_err()
                })
        })
        .cloned()
        .collect()
}

/// What [`failback`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failback {
    /// Nothing to return to.
    None,
    /// Return now: the fresh decision, and the clusters it returns to.
    Now(Decision, Vec<String>),
    /// Clusters to return to are not stable yet; look again at this time.
    At(Timestamp),
}

/// Whether to fail back to some of `failed_over` (clusters the binding failed over from):
/// those a fresh decision chooses but `decision` (the kept placement) does not, once each has
/// been `Ready` for `stable` at `now`.
pub fn failback<C: Borrow<Cluster>>(
    req: &Request<'_>,
    decision: &Decision,
    clusters: &[C],
    failed_over: &[&str],
    stable: Duration,
    now: Timestamp,
) -> Failback {
    if failed_over.is_empty() || decision.error.is_some() {
        return Failback::None;
    }
    let fresh = schedule(
        &Request {
            rebalance: true,
            ..req.clone()
        },
        clusters,
    );
    if fresh.error.is_some() {
        return Failback::None;
    }
    let returning: Vec<String> = fresh
        .clusters
        .iter()
        .map(|a| a.cluster.clone())
        .filter(|c| failed_over.contains(&c.as_str()))
        .filter(|c| !decision.clusters.iter().any(|a| a.cluster == *c))
        .collect();
    if returning.is_empty() {
        return Failback::None;
    }
    let mut latest = now;
    for c in &returning {
        let since = clusters
            .iter()
            .map(Borrow::borrow)
            .find(|k| name(k) == c)
            .and_then(ready_since);
        // The fresh decision only takes Ready clusters; one that turned otherwise meanwhile
        // waits for the next change.
        let Some(stable_at) = since.and_then(|t| t.checked_add(stable).ok()) else {
            return Failback::None;
        };
        latest = latest.max(stable_at);
    }
    if latest > now {
        Failback::At(latest)
    } else {
        Failback::Now(fresh, returning)
    }
}

/// Since when `cluster` has been `Ready=True`, if it is.
pub fn ready_since(cluster: &Cluster) -> Option<Timestamp> {
    let conditions = &cluster.status.as_ref()?.conditions;
    let ready = flotilla_apis::conditions::find(conditions, CONDITION_READY)?;
    (ready.status == "True").then_some(ready.last_transition_time.0)
}
