//! Health of the workload controllers' objects, read from their status counters the way
//! `kubectl rollout status` reads them (k8s.io/kubectl/pkg/polymorphichelpers/rollout_status.go).
//!
//! Each check starts from `observedGeneration`: until the controller has seen the latest spec,
//! its counters describe the previous one, and a finished old rollout would read as a finished
//! new one.

use serde_json::Value;

use super::health::Health;
use super::object::{self, condition, desired_replicas, int, observed};

/// A counter of `status`, absent meaning zero (the API server omits zero counters).
fn count(object: &Value, field: &str) -> i64 {
    int(object, &format!("/status/{field}")).unwrap_or(0)
}

/// Whether `spec.updateStrategy.type` is `RollingUpdate` (the default). Under `OnDelete` pods
/// change only when someone deletes them, so no rollout is ever waited for.
fn rolling_update(object: &Value) -> bool {
    object::text(object, "/spec/updateStrategy/type").is_none_or(|t| t == "RollingUpdate")
}

/// A Deployment is available when its latest rollout has finished: every desired replica runs
/// the current template and is available, and no old replica is left.
pub(crate) fn deployment(object: &Value) -> Health {
    if let Err(message) = observed(object) {
        return Health::pending(message);
    }
    if let Some(c) = condition(object, "Progressing") {
        if c.is_false() && c.reason == "ProgressDeadlineExceeded" {
            return Health::degraded(match c.message {
                "" => "progress deadline exceeded".to_owned(),
                message => format!("progress deadline exceeded: {message}"),
            });
        }
    }
    if let Some(c) = condition(object, "ReplicaFailure") {
        if c.is_true() {
            return Health::degraded(format!("replica failure: {}", c.explain()));
        }
    }
    let desired = desired_replicas(object);
    let updated = count(object, "updatedReplicas");
    let replicas = count(object, "replicas");
    let available = count(object, "availableReplicas");
    if updated < desired {
        Health::pending(format!(
            "rollout in progress: {updated} of {desired} updated"
        ))
    } else if replicas > updated {
        Health::pending(format!(
            "rollout in progress: {} old replicas pending termination",
            replicas - updated
        ))
    } else if available < desired {
        Health::pending(format!("{available} of {desired} replicas available"))
    } else if updated > desired {
        Health::pending(format!("scaling down: {updated} replicas, want {desired}"))
    } else {
        Health::available(format!("{available} of {desired} replicas available"))
    }
}

/// A StatefulSet is available when every replica is ready and, under `RollingUpdate`, runs
/// the update revision (or, with a partition, every replica above the partition does).
pub(crate) fn stateful_set(object: &Value) -> Health {
    if let Err(message) = observed(object) {
        return Health::pending(message);
    }
    let desired = desired_replicas(object);
    let ready = count(object, "readyReplicas");
    if ready < desired {
        return Health::pending(format!("{ready} of {desired} replicas ready"));
    }
    let replicas = count(object, "replicas");
    if replicas > desired {
        return Health::pending(format!("scaling down: {replicas} replicas, want {desired}"));
    }
    if rolling_update(object) {
        let updated = count(object, "updatedReplicas");
        let partition = int(object, "/spec/updateStrategy/rollingUpdate/partition").unwrap_or(0);
        if partition > 0 {
            // Ordinals below the partition stay at the old revision on purpose.
            let target = (desired - partition).max(0);
            if updated < target {
                return Health::pending(format!(
                    "rollout in progress: {updated} of {target} updated (partition {partition})"
                ));
            }
            return Health::available(format!(
                "{ready} of {desired} replicas ready, partitioned rollout complete"
            ));
        }
        if updated < desired {
            return Health::pending(format!(
                "rollout in progress: {updated} of {desired} updated"
            ));
        }
        let current = object::text(object, "/status/currentRevision");
        let update = object::text(object, "/status/updateRevision");
        if current != update {
            return Health::pending(format!(
                "rollout in progress: waiting for revision {}",
                update.unwrap_or("(unknown)")
            ));
        }
    }
    Health::available(format!("{ready} of {desired} replicas ready"))
}

/// A DaemonSet is available when every node that should run its pod runs the current one, and
/// that pod is available.
pub(crate) fn daemon_set(object: &Value) -> Health {
    if let Err(message) = observed(object) {
        return Health::pending(message);
    }
    let desired = count(object, "desiredNumberScheduled");
    let updated = count(object, "updatedNumberScheduled");
    let available = count(object, "numberAvailable");
    if rolling_update(object) && updated < desired {
        Health::pending(format!(
            "rollout in progress: {updated} of {desired} updated"
        ))
    } else if available < desired {
        Health::pending(format!("{available} of {desired} pods available"))
    } else {
        Health::available(format!("{available} of {desired} pods available"))
    }
}

/// A ReplicaSet is available when it runs exactly its desired replicas, all available.
pub(crate) fn replica_set(object: &Value) -> Health {
    if let Err(message) = observed(object) {
        return Health::pending(message);
    }
    if let Some(c) = condition(object, "ReplicaFailure") {
        if c.is_true() {
            return Health::degraded(format!("replica failure: {}", c.explain()));
        }
    }
    let desired = desired_replicas(object);
    let available = count(object, "availableReplicas");
    let replicas = count(object, "replicas");
    if available < desired {
        Health::pending(format!("{available} of {desired} replicas available"))
    } else if replicas > desired {
        Health::pending(format!("scaling down: {replicas} replicas, want {desired}"))
    } else {
        Health::available(format!("{available} of {desired} replicas available"))
    }
}

/// A Job is available once it has completed, and degraded once it has failed (or is about to:
/// `FailureTarget` is set while the failed Job's pods are still terminating).
pub(crate) fn job(object: &Value) -> Health {
    let is_true = |type_| condition(object, type_).filter(|c| c.is_true());
    if is_true("Complete").is_some() {
        let succeeded = count(object, "succeeded");
        return Health::available(format!("completed: {succeeded} succeeded"));
    }
    if let Some(failed) = is_true("Failed").or_else(|| is_true("FailureTarget")) {
        return Health::degraded(format!("job failed: {}", failed.explain()));
    }
    if object.pointer("/spec/suspend") == Some(&Value::Bool(true)) {
        return Health::pending("suspended");
    }
    Health::pending(format!("running: {} active", count(object, "active")))
}

/// Shared with the health tests: `check` runs a table of objects through `assess`.
#[cfg(test)]
pub(super) mod tests;
