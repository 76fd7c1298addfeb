//! Moving a workload without losing capacity: graceful eviction and held shrinks.
//!
//! When failover takes a cluster out of a binding, the scheduler records a
//! `gracefulEvictionTask` and the binding controller keeps that cluster's Work (so the copy
//! there keeps serving, if it still can) until the replacement is up — every cluster the
//! binding now targets has applied the object and, for kinds with replicas, reports as many
//! ready replicas as it should run — or the task's grace period ends (`gracePeriodSeconds`,
//! else the hub's default). `suppressDeletion: true` keeps the copy past both, until a person
//! clears it. A task whose cluster the binding targets again (failback) is done at once.
//!
//! When a placement changes so that some clusters get fewer replicas and others more
//! (failback, a weight change), the shrinking clusters keep the replicas their Work has until
//! every growing cluster reports its new count ready: the fleet surges for a while instead of
//! dropping below the ready count it had.
//!
//! The decisions are pure functions of their arguments (the caller passes the time and the
//! members' reports); [`end_tasks`] writes the binding when some tasks are done.

use std::collections::HashMap;
use std::time::Duration;

use flotilla_apis::work::v1alpha1::{GracefulEvictionTask, ManifestStatus, ResourceHealth};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, ResourceExt};
use serde_json::json;

use super::feedback::{health, item, member_status};
use crate::propagation::binding::BindingObject;
use crate::propagation::feed::requeue_at;
use crate::render::ReplicaShare;
use crate::{Error, Result};

/// How one target cluster is doing with the object, from its Work's status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The member applied the object.
    pub applied: bool,
    /// The member's `Available` is not `False`.
    pub healthy: bool,
    /// `readyReplicas` the member fed back, if any.
    pub ready: Option<u32>,
}

/// [`Progress`] from the manifest's status in a cluster's Work (`None`: not reported yet).
pub fn progress(manifest: Option<&ManifestStatus>) -> Progress {
    let Some(m) = manifest else {
        return Progress::default();
    };
    let ready = member_status(m)
        .and_then(|s| s["readyReplicas"].as_u64())
        .map(|n| u32::try_from(n).unwrap_or(u32::MAX));
    Progress {
        applied: item("", Some(m)).applied,
        healthy: health(m) != ResourceHealth::Unhealthy,
        ready,
    }
}

/// Whether the object is up in every target: each applied and not unhealthy, and, where a
/// replica count is wanted (`Some`), that many replicas ready. `targets` pairs each cluster's
/// progress with the replicas it should run. No targets: nothing replaces the copy.
pub fn replacement_ready(targets: &[(Progress, Option<u32>)]) -> bool {
    !targets.is_empty()
        && targets.iter().all(|(p, want)| {
            p.applied
                && p.healthy
                && match want {
                    Some(0) | None => true,
                    Some(n) => p.ready.unwrap_or(0) >= *n,
                }
        })
}

/// The eviction tasks still to keep, and when the earliest kept one times out. A task goes
/// when its cluster is a target again, or (unless it suppresses deletion) when the replacement
/// is ready or its grace period (`default_grace` when it names none) has passed since it began.
pub fn pending_tasks(
    tasks: &[GracefulEvictionTask],
    targets: &[String],
    replacement_ready: bool,
    now: Timestamp,
    default_grace: Duration,
) -> (Vec<GracefulEvictionTask>, Option<Timestamp>) {
    let mut keep = Vec::new();
    let mut next: Option<Timestamp> = None;
    for t in tasks {
        if targets.contains(&t.from_cluster) {
            continue;
        }
        let suppressed = t.suppress_deletion == Some(true);
        if replacement_ready && !suppressed {
            continue;
        }
        let grace = t
            .grace_period_seconds
            .map(|s| Duration::from_secs(u64::try_from(s.max(0)).unwrap_or(0)))
            .unwrap_or(default_grace);
        let deadline = t
            .creation_timestamp
            .as_ref()
            .and_then(|c| c.0.checked_add(grace).ok());
        match deadline {
            Some(d) if d <= now && !suppressed => continue,
            Some(d) if !suppressed => next = Some(next.map_or(d, |n| n.min(d))),
            _ => {}
        }
        keep.push(t.clone());
    }
    (keep, next)
}

/// Holds shrinking clusters at their current replicas while a growing one is not ready yet.
///
/// `shares` are the new per-cluster replica counts (changed in place), `current` the replicas
/// each cluster's Work asks for now, `progress` what each member reports. Only plain replica
/// counts (Deployments, StatefulSets, ReplicaSets) are held, and only when replicas move
/// between clusters: a scale-down of the template is never held. Returns the clusters held.
pub fn hold_shrinking(
    shares: &mut HashMap<String, ReplicaShare>,
    current: &HashMap<String, u32>,
    progress: &HashMap<String, Progress>,
) -> Vec<String> {
    let plain = |share: &ReplicaShare| match share {
        ReplicaShare::Replicas(n) => Some(*n),
        _ => None,
    };
    let wanted: u64 = shares.values().filter_map(plain).map(u64::from).sum();
    let running: u64 = shares
        .keys()
        .filter_map(|c| current.get(c))
        .map(|n| u64::from(*n))
        .sum();
    if wanted < running {
        // The template was scaled down: that is what the user asked for, not a move.
        return Vec::new();
    }
    let growing_unready = shares.iter().any(|(c, share)| match share {
        ReplicaShare::Replicas(want) => {
            let p = progress.get(c).copied().unwrap_or_default();
            *want > 0 && (!p.applied || p.ready.unwrap_or(0) < *want)
        }
        _ => false,
    });
    if !growing_unready {
        return Vec::new();
    }
    let mut held = Vec::new();
    for (c, share) in shares.iter_mut() {
        if let (ReplicaShare::Replicas(want), Some(&now)) = (&*share, current.get(c)) {
            if now > *want {
                *share = ReplicaShare::Replicas(now);
                held.push(c.clone());
            }
        }
    }
    held.sort();
    held
}

/// What each target cluster must report for the replacement to count as up: its progress
/// and, for kinds with replicas, how many it should run (its share in `wanted`; the binding's
/// `replicas` when the share is not a plain count, as for a kind the scheduler does not divide).
pub fn replacement_targets(
    targets: &[String],
    wanted: &HashMap<String, ReplicaShare>,
    progress: &HashMap<String, Progress>,
    replicas: i32,
) -> Vec<(Progress, Option<u32>)> {
    targets
        .iter()
        .map(|c| {
            let want = match wanted.get(c) {
                Some(ReplicaShare::Replicas(n)) => Some(*n),
                Some(_) => None,
                None => u32::try_from(replicas).ok(),
            };
            (progress.get(c).copied().unwrap_or_default(), want)
        })
        .collect()
}

/// Ends the eviction tasks of binding `b` that are done ([`pending_tasks`]; the binding's
/// update brings the next round, which deletes their Works), and says when to look again: when
/// the earliest kept task times out.
pub async fn end_tasks<B: BindingObject>(
    api: &Api<B>,
    b: &B,
    targets: &[String],
    wanted: &HashMap<String, ReplicaShare>,
    progress: &HashMap<String, Progress>,
    default_grace: Duration,
) -> Result<Action> {
    let spec = b.spec();
    let name = b.name_any();
    let up = replacement_targets(targets, wanted, progress, spec.replicas);
    let now = Timestamp::now();
    let (keep, next) = pending_tasks(
        &spec.graceful_eviction_tasks,
        targets,
        replacement_ready(&up),
        now,
        default_grace,
    );
    if keep != spec.graceful_eviction_tasks {
        tracing::info!(binding = %name, namespace = ?b.scope_namespace(), kept = keep.len(), "graceful eviction done");
        let patch = json!({
            "metadata": {"resourceVersion": b.resource_version()},
            // null, not []: no tasks left reads as no field.
            "spec": {"gracefulEvictionTasks": (!keep.is_empty()).then_some(&keep)},
        });
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            // The binding's update brings the next round, which deletes the Work.
            Ok(_) => {
                let ended = spec
                    .graceful_eviction_tasks
                    .len()
                    .saturating_sub(keep.len());
                crate::metrics::metrics()
                    .graceful_evictions_ended
                    .inc_by(u64::try_from(ended).unwrap_or(0));
            }
            // Changed meanwhile: that change brings the next round.
            Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => {}
            Err(e) => {
                return Err(Error::hub(format!("end the evictions of binding {name}"))(
                    e,
                ));
            }
        }
    }
    Ok(requeue_at(next, now))
}

#[cfg(test)]
mod tests;
