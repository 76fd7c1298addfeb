//! `pods/ephemeralcontainers`: an update there changes the pod's `spec.ephemeralContainers`
//! and nothing else (kube-apiserver's ephemeral containers strategy starts from the stored pod).

use serde_json::Value;

/// The stored pod with the client's ephemeral containers (and its resourceVersion, the
/// update's precondition).
pub(super) fn ephemeral_containers_only(old: &Value, new: &mut Value) {
    let mut out = old.clone();
    let containers = new.pointer("/spec/ephemeralContainers").cloned();
    if let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut) {
        match containers {
            Some(c) => spec.insert("ephemeralContainers".into(), c),
            None => spec.remove("ephemeralContainers"),
        };
    }
    if let Some(rv) = new.pointer("/metadata/resourceVersion").cloned() {
        if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("resourceVersion".into(), rv);
        }
    }
    *new = out;
}
