//! Defaults of the kinds of the smaller built-in groups the hub stores (endpoint slices,
//! ingress classes, priority classes, storage classes, CSI drivers): their `SetDefaults_*`.

use serde_json::{json, Value};

use super::{child, default_ptr, each, existing};

/// `SetObjectDefaults_<Kind>` for `group`/`kind`; false when this module has none for it.
pub(super) fn apply(group: &str, kind: &str, obj: &mut Value) -> bool {
    match (group, kind) {
        ("discovery.k8s.io", "EndpointSlice") => each(obj, "ports", |p| {
            default_ptr(p, "name", json!(""));
            default_ptr(p, "protocol", json!("TCP"));
        }),
        ("networking.k8s.io", "IngressClass") => {
            if let Some(params) = existing(obj, "spec").and_then(|s| existing(s, "parameters")) {
                default_ptr(params, "scope", json!("Cluster"));
            }
        }
        ("scheduling.k8s.io", "PriorityClass") => {
            default_ptr(obj, "preemptionPolicy", json!("PreemptLowerPriority"))
        }
        ("storage.k8s.io", "StorageClass") => {
            default_ptr(obj, "reclaimPolicy", json!("Delete"));
            default_ptr(obj, "volumeBindingMode", json!("Immediate"));
        }
        ("storage.k8s.io", "CSIDriver") => csi_driver(obj),
        ("storage.k8s.io", "VolumeAttachment") => {
            // The inline volume spec of a migrated in-tree volume gets the PV defaults.
            if let Some(spec) = existing(obj, "spec")
                .and_then(|s| existing(s, "source"))
                .and_then(|s| existing(s, "inlineVolumeSpec"))
            {
                default_ptr(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
                default_ptr(spec, "volumeMode", json!("Filesystem"));
            }
        }
        _ => return false,
    }
    true
}

/// `SetDefaults_CSIDriver` (with `SELinuxMountReadWriteOncePod`, on by default in 1.32).
fn csi_driver(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_ptr(spec, "attachRequired", json!(true));
    default_ptr(spec, "podInfoOnMount", json!(false));
    default_ptr(spec, "storageCapacity", json!(false));
    default_ptr(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
    let no_modes = spec
        .get("volumeLifecycleModes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_modes {
        spec["volumeLifecycleModes"] = json!(["Persistent"]);
    }
    default_ptr(spec, "requiresRepublish", json!(false));
    default_ptr(spec, "seLinuxMount", json!(false));
}
