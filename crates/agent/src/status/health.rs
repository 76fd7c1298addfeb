//! Whether an applied object is available, judged the way Kubernetes users already judge it.
//!
//! A Work's `Available` condition is what the hub aggregates and what failover acts on, so it
//! must mean what `kubectl rollout status` and `kubectl wait` mean: a Deployment is available
//! once its rollout has finished, not merely once it exists. The workload controllers' objects
//! (in `workloads.rs`) are judged by their status counters; other well-known kinds by their
//! phase or a condition; any other object by its `Ready` or `Available` condition when it has
//! one, and otherwise by existing, since there is nothing better to go on.

use flotilla_apis::work::v1alpha1::{REASON_AVAILABLE, REASON_NOT_AVAILABLE};
use serde_json::Value;

use super::object::{self, condition, group_kind};
use super::workloads;

/// How healthy one applied object is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Health {
    /// Whether the object does its job (`Available=True`).
    pub available: bool,
    /// Whether the object reports a failure that waiting will not fix (`Degraded=True`), e.g. a
    /// Deployment past its progress deadline or a failed Job. A degraded object is never
    /// available.
    pub degraded: bool,
    /// The `Available` condition's reason: [`REASON_AVAILABLE`] or [`REASON_NOT_AVAILABLE`].
    pub reason: &'static str,
    /// What the object's state is, in words: `3 of 3 replicas available`,
    /// `rollout in progress: 1 of 3 updated`, the failure a Job reports, ...
    pub message: String,
}

impl Health {
    /// Available, with `message` saying why.
    pub(crate) fn available(message: impl Into<String>) -> Self {
        Self {
            available: true,
            degraded: false,
            reason: REASON_AVAILABLE,
            message: message.into(),
        }
    }

    /// Not available yet, but nothing has gone wrong: a rollout in progress, a pending volume.
    pub(crate) fn pending(message: impl Into<String>) -> Self {
        Self {
            available: false,
            degraded: false,
            reason: REASON_NOT_AVAILABLE,
            message: message.into(),
        }
    }

    /// Failed: not available, and waiting will not help.
    pub(crate) fn degraded(message: impl Into<String>) -> Self {
        Self {
            available: false,
            degraded: true,
            reason: REASON_NOT_AVAILABLE,
            message: message.into(),
        }
    }
}

/// How healthy `object` (as the member returned it, status included) is.
pub fn assess(object: &Value) -> Health {
    match group_kind(object) {
        ("apps", "Deployment") => workloads::deployment(object),
        ("apps", "StatefulSet") => workloads::stateful_set(object),
        ("apps", "DaemonSet") => workloads::daemon_set(object),
        ("apps", "ReplicaSet") => workloads::replica_set(object),
        ("batch", "Job") => workloads::job(object),
        ("", "Pod") => pod(object),
        ("", "Service") => service(object),
        ("", "PersistentVolumeClaim") => persistent_volume_claim(object),
        ("", "Namespace") => namespace(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => custom_resource_definition(object),
        _ => by_conditions(object),
    }
}

fn pod(object: &Value) -> Health {
    match object::text(object, "/status/phase").unwrap_or("Pending") {
        "Failed" => Health::degraded(failed_pod(object)),
        // A finished Pod is not Ready (its containers are gone), yet it did its job.
        "Succeeded" => Health::available("pod succeeded"),
        phase => match condition(object, "Ready") {
            Some(ready) if ready.is_true() => Health::available("pod is ready"),
            Some(ready) if !ready.explain().is_empty() => {
                Health::pending(format!("pod is {phase}, not ready: {}", ready.explain()))
            }
            _ => Health::pending(format!("pod is {phase}, not ready")),
        },
    }
}

fn failed_pod(object: &Value) -> String {
    let reason = object::text(object, "/status/reason").unwrap_or_default();
    let message = object::text(object, "/status/message").unwrap_or_default();
    match (reason, message) {
        ("", "") => "pod failed".to_owned(),
        (reason, "") => format!("pod failed: {reason}"),
        ("", message) => format!("pod failed: {message}"),
        (reason, message) => format!("pod failed: {reason}: {message}"),
    }
}

fn service(object: &Value) -> Health {
    if object::text(object, "/spec/type") != Some("LoadBalancer") {
        return Health::available("service exists");
    }
    let ingress = object
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if ingress == 0 {
        Health::pending("waiting for the load balancer to be provisioned (no ingress yet)")
    } else {
        Health::available(format!("load balancer has {ingress} ingress point(s)"))
    }
}

fn persistent_volume_claim(object: &Value) -> Health {
    match object::text(object, "/status/phase").unwrap_or("Pending") {
        "Bound" => Health::available("claim is bound"),
        "Lost" => Health::degraded("claim lost its volume"),
        phase => Health::pending(format!("claim is {phase}, not bound")),
    }
}

fn namespace(object: &Value) -> Health {
    match object::text(object, "/status/phase").unwrap_or("Active") {
        "Active" => Health::available("namespace is active"),
        phase => Health::pending(format!("namespace is {phase}")),
    }
}

fn custom_resource_definition(object: &Value) -> Health {
    match condition(object, "Established") {
        Some(c) if c.is_true() => Health::available("definition is established"),
        _ => match condition(object, "NamesAccepted") {
            Some(names) if names.is_false() => {
                Health::degraded(format!("names not accepted: {}", names.explain()))
            }
            _ => Health::pending("waiting for the definition to be established"),
        },
    }
}

/// Any other object: a `Ready` (or else `Available`) condition decides, as `kubectl wait
/// --for=condition=Ready` would; an object without either is available by existing.
fn by_conditions(object: &Value) -> Health {
    let Some((type_, c)) = ["Ready", "Available"]
        .into_iter()
        .find_map(|type_| condition(object, type_).map(|c| (type_, c)))
    else {
        return Health::available("exists");
    };
    let generation = object::int(object, "/metadata/generation");
    // A condition stamped for an older generation describes the previous spec.
    if let (Some(seen), Some(generation)) = (c.observed_generation, generation) {
        if seen < generation {
            return Health::pending(format!(
                "{type_} condition is for generation {seen}, waiting for generation {generation}"
            ));
        }
    }
    let detail = match c.explain() {
        explained if explained.is_empty() => String::new(),
        explained => format!(": {explained}"),
    };
    let message = format!("{type_}={}{detail}", c.status);
    if c.is_true() {
        Health::available(message)
    } else {
        Health::pending(message)
    }
}

#[cfg(test)]
mod tests;
