//! `metadata.generation`: which kinds have it and when it moves, as kube-apiserver's strategies
//! decide.
//!
//! Only kinds whose controllers need to tell spec changes from status changes carry one: the
//! workloads, PodDisruptionBudgets, Ingresses, NetworkPolicies, CustomResourceDefinitions and
//! every custom resource. Their create sets it to 1 and an update that changes the spec adds one.
//! Other kinds (ConfigMaps, Secrets, ServiceAccounts, RBAC, …) get none; for every kind, an
//! update can never set it (`rest.BeforeUpdate` puts the stored value back).

use serde_json::{Map, Value};

use crate::registry::ResourceInfo;

/// Does `res` carry a generation (`PrepareForCreate` sets `Generation = 1`)?
pub fn tracked(res: &ResourceInfo) -> bool {
    if res.custom {
        return true;
    }
    matches!(
        (res.group.as_str(), res.kind.as_str()),
        (
            "apps",
            "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet"
        ) | ("batch", "Job" | "CronJob")
            | ("", "ReplicationController")
            | ("policy", "PodDisruptionBudget")
            | ("networking.k8s.io", "Ingress" | "NetworkPolicy")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
            | ("admissionregistration.k8s.io", _)
    )
}

/// The generation an update from `old` to `new` stores: the stored one (requests cannot set
/// it), plus one when the kind tracks generations and the update changes what they count.
/// None: the stored object has none and the update adds none.
pub fn after_update(res: &ResourceInfo, old: &Value, new: &Value) -> Option<i64> {
    let stored = old.pointer("/metadata/generation").and_then(Value::as_i64);
    if !tracked(res) || !counted_change(res, old, new) {
        return stored;
    }
    Some(stored.unwrap_or(0) + 1)
}

/// Does the update change what the kind's generation counts?
fn counted_change(res: &ResourceInfo, old: &Value, new: &Value) -> bool {
    if res.custom {
        // Everything but metadata (`customResourceStrategy`); status only when it is not a
        // subresource, since the status endpoint never moves the generation.
        let skip: &[&str] = if res.status {
            &["metadata", "status"]
        } else {
            &["metadata"]
        };
        return content(old, skip) != content(new, skip);
    }
    let spec = content(old, &["metadata", "status"]) != content(new, &["metadata", "status"]);
    if res.group == "apps" && res.kind == "Deployment" {
        // Annotations are copied to the Deployment's ReplicaSets, so they count too.
        let annotations = |v: &Value| v.pointer("/metadata/annotations").cloned();
        return spec || annotations(old) != annotations(new);
    }
    spec
}

/// The top-level fields of `obj` but `skip` (and apiVersion/kind, which identify, not describe).
fn content(obj: &Value, skip: &[&str]) -> Map<String, Value> {
    obj.as_object()
        .map(|o| {
            o.iter()
                .filter(|(k, _)| {
                    !skip.contains(&k.as_str()) && !matches!(k.as_str(), "apiVersion" | "kind")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
