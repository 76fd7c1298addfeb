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
        return content_differs(old, new, skip);
    }
    let spec = content_differs(old, new, &["metadata", "status"]);
    if res.group == "apps" && res.kind == "Deployment" {
        // Annotations are copied to the Deployment's ReplicaSets, so they count too.
        let annotations = |v: &Value| v.pointer("/metadata/annotations").cloned();
        return spec || annotations(old) != annotations(new);
    }
    spec
}

/// Do `old` and `new` differ in a top-level field but `skip` (and apiVersion/kind, which
/// identify, not describe)? Compared in place: a Work's status write must not copy its
/// manifests twice to find its spec unchanged.
fn content_differs(old: &Value, new: &Value, skip: &[&str]) -> bool {
    let counted =
        |k: &String| !skip.contains(&k.as_str()) && !matches!(k.as_str(), "apiVersion" | "kind");
    let empty = Map::new();
    let (old, new) = (
        old.as_object().unwrap_or(&empty),
        new.as_object().unwrap_or(&empty),
    );
    let fields = |o: &Map<String, Value>| o.keys().filter(|k| counted(k)).count();
    fields(old) != fields(new)
        || old
            .iter()
            .filter(|(k, _)| counted(k))
            .any(|(k, v)| new.get(k) != Some(v))
}

#[cfg(test)]
mod tests;
