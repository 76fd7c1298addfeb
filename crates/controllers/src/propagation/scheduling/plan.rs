//! The scheduler controller's decisions around [`flotilla_scheduler::schedule`], as functions
//! of plain values: whether a placement change divides the replicas afresh, what to write into
//! the binding's spec (clusters and eviction tasks) and status (`Scheduled`, the observed
//! generation, the clusters it failed over from).

use flotilla_apis::conditions::{self, Set};
use flotilla_apis::policy::v1alpha1::PurgeMode;
use flotilla_apis::work::v1alpha1::{
    FailedOverCluster, GracefulEvictionTask, ResourceBindingSpec, ResourceBindingStatus,
    TargetCluster, CONDITION_SCHEDULED, REASON_BINDING_SCHEDULED, REASON_NO_CLUSTER_FIT,
    REASON_UNSCHEDULABLE,
};
use flotilla_scheduler::{Decision, Outcome};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use serde_json::{json, Value};

use super::{MANAGER, REASON_TAINT_UNTOLERATED};
use crate::propagation::workload::fnv64;

/// The hash of a binding's placement, as remembered in
/// [`super::PLACEMENT_HASH_ANNOTATION`].
pub(super) fn placement_hash(spec: &ResourceBindingSpec) -> String {
    let placement = serde_json::to_string(&spec.placement).unwrap_or_default();
    format!("{:016x}", fnv64(placement.as_bytes()))
}

/// Whether the replicas are divided afresh: the placement changed since the binding was last
/// scheduled (`last`, the remembered hash, against `hash`, the current one). A binding
/// scheduled before the hash was remembered keeps its placement (no reshuffle on upgrade).
pub(super) fn rebalance(last: Option<&str>, hash: &str) -> bool {
    last.is_some_and(|h| h != hash)
}

/// What to write into the binding's spec after a decision.
#[derive(Debug, PartialEq)]
pub(super) struct SpecWrite {
    /// `spec.clusters`.
    pub chosen: Vec<TargetCluster>,
    /// `spec.gracefulEvictionTasks`.
    pub tasks: Vec<GracefulEvictionTask>,
    /// The clusters or tasks change (else only the placement hash is written).
    pub moved: bool,
}

/// The spec write `decision` calls for on a binding with `spec`, whose placement was last
/// scheduled under `last_placement` (now `placement_hash`): none when the decision failed or
/// nothing changes.
pub(super) fn spec_write(
    spec: &ResourceBindingSpec,
    decision: &Decision,
    evicted: &[(String, u32)],
    now: Timestamp,
    last_placement: Option<&str>,
    placement_hash: &str,
) -> Option<SpecWrite> {
    if decision.error.is_some() {
        return None;
    }
    let chosen: Vec<TargetCluster> = decision
        .clusters
        .iter()
        .map(|a| TargetCluster {
            name: a.cluster.clone(),
            replicas: i32::try_from(a.replicas).unwrap_or(i32::MAX),
        })
        .collect();
    let tasks = eviction_tasks(spec, &chosen, evicted, now);
    let moved = chosen != spec.clusters || tasks != spec.graceful_eviction_tasks;
    (moved || last_placement != Some(placement_hash)).then_some(SpecWrite {
        chosen,
        tasks,
        moved,
    })
}

/// The binding's eviction tasks after a decision: a task for each cluster just evicted (unless
/// the policy's `failover.cluster.purgeMode` is `Directly`), none for a cluster the object is
/// placed in again.
pub(super) fn eviction_tasks(
    spec: &ResourceBindingSpec,
    chosen: &[TargetCluster],
    evicted: &[(String, u32)],
    now: Timestamp,
) -> Vec<GracefulEvictionTask> {
    let mut tasks = spec.graceful_eviction_tasks.clone();
    tasks.retain(|t| !chosen.iter().any(|c| c.name == t.from_cluster));
    let directly = spec
        .failover
        .as_ref()
        .and_then(|f| f.cluster.as_ref())
        .is_some_and(|c| c.purge_mode == PurgeMode::Directly);
    if directly {
        return tasks;
    }
    for (cluster, replicas) in evicted {
        if tasks.iter().any(|t| t.from_cluster == *cluster) {
            continue;
        }
        tasks.push(GracefulEvictionTask {
            from_cluster: cluster.clone(),
            replicas: (*replicas > 0).then(|| i32::try_from(*replicas).unwrap_or(i32::MAX)),
            reason: REASON_TAINT_UNTOLERATED.to_owned(),
            message: Some(format!(
                "{cluster} has a NoExecute taint the policy does not tolerate any more; its copy \
                 stays until the replacement is available"
            )),
            producer: MANAGER.to_owned(),
            creation_timestamp: Some(Time(now)),
            ..GracefulEvictionTask::default()
        });
    }
    tasks
}

/// The clusters the binding failed over from, after `decision`: those of `before` still
/// registered and not placed again, and the clusters just `evicted` or evicting (`tasks` of
/// the scheduler's, in case the status write after an eviction failed), since `now`.
pub(super) fn failed_over(
    before: &[FailedOverCluster],
    registered: &[String],
    decision: &Decision,
    evicted: &[(String, u32)],
    tasks: &[GracefulEvictionTask],
    now: Timestamp,
) -> Vec<FailedOverCluster> {
    let placed = |c: &str| decision.clusters.iter().any(|a| a.cluster == c);
    let mut out: Vec<FailedOverCluster> = before
        .iter()
        .filter(|f| registered.contains(&f.name) && !placed(&f.name))
        .cloned()
        .collect();
    let evicting = tasks
        .iter()
        .filter(|t| t.producer == MANAGER)
        .map(|t| &t.from_cluster);
    for c in evicted.iter().map(|(c, _)| c).chain(evicting) {
        if !placed(c) && !out.iter().any(|f| f.name == *c) {
            out.push(FailedOverCluster {
                name: c.clone(),
                since: Time(now),
            });
        }
    }
    out
}

/// `Scheduled`'s reason, message and status for a decision.
pub(super) fn status_condition(d: &Decision) -> (String, String, &'static str) {
    match &d.error {
        None => (
            REASON_BINDING_SCHEDULED.to_owned(),
            format!("placed in {} cluster(s)", d.clusters.len()),
            "True",
        ),
        Some(e) => {
            let none_fit = d.explanation.iter().all(|v| v.outcome == Outcome::Filtered);
            let reason = if none_fit {
                REASON_NO_CLUSTER_FIT
            } else {
                REASON_UNSCHEDULABLE
            };
            (reason.to_owned(), e.clone(), "False")
        }
    }
}

/// The binding's `status` after `decision` for its `generation`, when it differs from
/// `status` (the one read): `Scheduled`, `schedulerObservedGeneration`, `failedOver`, and on
/// success `lastScheduledTime` and the affinity group used.
pub(super) fn status_write(
    status: Option<&ResourceBindingStatus>,
    decision: &Decision,
    generation: i64,
    failed_over: &[FailedOverCluster],
    now: Timestamp,
) -> Option<Value> {
    let (reason, message, state) = status_condition(decision);
    let mut conds = status.map(|s| s.conditions.clone()).unwrap_or_default();
    let changed = conditions::set(
        &mut conds,
        Set {
            type_: CONDITION_SCHEDULED,
            status: state,
            reason: &reason,
            message: &message,
        },
        now,
    );
    let observed = status.and_then(|s| s.scheduler_observed_generation);
    let affinity = status.and_then(|s| s.scheduler_observed_affinity_name.clone());
    let failed_over_before = status.map(|s| s.failed_over.as_slice()).unwrap_or_default();
    if !changed
        && observed == Some(generation)
        && affinity == decision.affinity_name
        && failed_over_before == failed_over
    {
        return None;
    }
    let scheduled = conds
        .iter()
        .find(|c| c.type_ == CONDITION_SCHEDULED)
        .cloned();
    let mut out = json!({
        "schedulerObservedGeneration": generation,
        "conditions": [scheduled],
        "failedOver": failed_over,
    });
    if decision.error.is_none() {
        out["lastScheduledTime"] = json!(Time(now));
    }
    if let Some(a) = &decision.affinity_name {
        out["schedulerObservingAffinityName"] = json!(a);
    }
    Some(out)
}

/// The JSON patch that makes `write` (and the placement hash `placement_hash`) the spec of a
/// binding read at `generation`, applied only while its spec is still the one decided on: the
/// patch starts with a `test` of `metadata.generation`, which a spec change moves (the hub then
/// refuses the patch with 422, and the decision is made again on the new spec) and the other
/// controllers' status and metadata writes do not. (A resourceVersion precondition refused
/// nearly every first placement: the binding controller sets its finalizer at the same time.)
/// `annotated`: the binding has annotations already; `had_tasks`: its spec has eviction tasks.
pub(super) fn placement_patch(
    generation: i64,
    annotated: bool,
    had_tasks: bool,
    placement_hash: &str,
    write: &SpecWrite,
) -> Value {
    let hash_key = super::PLACEMENT_HASH_ANNOTATION
        .replace('~', "~0")
        .replace('/', "~1");
    let mut ops = vec![json!({"op": "test", "path": "/metadata/generation", "value": generation})];
    ops.push(if annotated {
        json!({"op": "add", "path": format!("/metadata/annotations/{hash_key}"), "value": placement_hash})
    } else {
        json!({"op": "add", "path": "/metadata/annotations", "value": {super::PLACEMENT_HASH_ANNOTATION: placement_hash}})
    });
    ops.push(json!({"op": "add", "path": "/spec/clusters", "value": write.chosen}));
    if !write.tasks.is_empty() {
        ops.push(json!({"op": "add", "path": "/spec/gracefulEvictionTasks", "value": write.tasks}));
    } else if had_tasks {
        ops.push(json!({"op": "remove", "path": "/spec/gracefulEvictionTasks"}));
    }
    Value::Array(ops)
}
