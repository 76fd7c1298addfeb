//! Removing what only the hub owns from a template before it goes into a member's Work:
//! server-set metadata and status, and the fields a member allocates for itself (a Service's
//! cluster IPs and node ports, a Job's generated selector, a claim's bound volume).

use flotilla_apis::names::{HUB_DELETION_METADATA, SERVER_SET_METADATA};
use serde_json::{Map, Value};

/// kubectl's copy of the last applied manifest: it describes the hub object, not the member's.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Pod-template labels Kubernetes generates for a Job; a member generates its own (with its own
/// uid), and the API server refuses a Job whose template carries a foreign one.
const JOB_GENERATED_LABELS: &[&str] = &[
    "controller-uid",
    "batch.kubernetes.io/controller-uid",
    "job-name",
    "batch.kubernetes.io/job-name",
];

/// Removes what only the hub owns from `obj` (see the module docs). Idempotent; fields that are
/// absent are skipped, and an object that is not a JSON object is left alone.
pub fn strip_hub_fields(obj: &mut Value) {
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    root.shift_remove("status");
    if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in SERVER_SET_METADATA.iter().chain(HUB_DELETION_METADATA) {
            meta.shift_remove(*field);
        }
        remove_key(meta, "annotations", LAST_APPLIED);
    }
    let Some(spec) = root.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    match kind.as_str() {
        "Service" => strip_service(spec),
        "Job" => strip_job(spec),
        "PersistentVolumeClaim" => {
            spec.shift_remove("volumeName");
        }
        _ => {}
    }
}

/// Cluster IPs and node ports are allocated by each member; a headless Service (`None`) must
/// stay headless, so that value is kept.
fn strip_service(spec: &mut Map<String, Value>) {
    if spec.get("clusterIP").and_then(Value::as_str) != Some("None") {
        spec.shift_remove("clusterIP");
    }
    let headless = spec
        .get("clusterIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| ips.iter().any(|ip| ip.as_str() == Some("None")));
    if !headless {
        spec.shift_remove("clusterIPs");
    }
    spec.shift_remove("healthCheckNodePort");
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            port.shift_remove("nodePort");
        }
    }
}

/// A Job's selector is generated from its uid unless the user chose it (`manualSelector`).
fn strip_job(spec: &mut Map<String, Value>) {
    let manual = spec.get("manualSelector").and_then(Value::as_bool) == Some(true);
    if !manual {
        spec.shift_remove("selector");
    }
    let template_meta = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("metadata"))
        .and_then(Value::as_object_mut);
    if let Some(meta) = template_meta {
        for label in JOB_GENERATED_LABELS {
            remove_key(meta, "labels", label);
        }
    }
}

/// Removes `key` from the map `meta[map]`, and the map itself when that leaves it empty.
fn remove_key(meta: &mut Map<String, Value>, map: &str, key: &str) {
    let Some(entries) = meta.get_mut(map).and_then(Value::as_object_mut) else {
        return;
    };
    if entries.shift_remove(key).is_some() && entries.is_empty() {
        meta.shift_remove(map);
    }
}

#[cfg(test)]
mod tests;
