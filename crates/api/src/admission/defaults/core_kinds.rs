//! Defaults of the core/v1 kinds the hub stores without running them (pods, pod templates,
//! replication controllers, persistent volumes, nodes, limit ranges, resource quotas): their
//! `SetDefaults_*` functions, and what their create strategies set (`PrepareForCreate`).

use serde_json::{json, Map, Value};

use super::pod::{self, quantities};
use super::{child, default_ptr, default_str, each, existing, is_nil, set, str_of};

/// `SetObjectDefaults_<Kind>` of a core/v1 kind of this module; false for any other kind.
pub(super) fn apply(kind: &str, obj: &mut Value) -> bool {
    match kind {
        "Pod" => pod_object(obj),
        "PodTemplate" => {
            if let Some(t) = existing(obj, "template") {
                pod::template(t);
            }
        }
        "ReplicationController" => replication_controller(obj),
        "PersistentVolume" => persistent_volume(obj),
        "Node" => node(obj),
        "LimitRange" => limit_range(obj),
        "ResourceQuota" => {
            for part in ["spec", "status"] {
                for key in ["hard", "used"] {
                    if let Some(q) = existing(obj, part).and_then(|p| existing(p, key)) {
                        quantities(q);
                    }
                }
            }
        }
        _ => return false,
    }
    true
}

/// What the create strategies of these kinds set on a new object (its status, which a create
/// never takes from the client).
pub(super) fn on_create(kind: &str, obj: &mut Value) {
    match kind {
        "Pod" => {
            let qos = qos_class(obj);
            set(obj, "status", json!({"phase": "Pending", "qosClass": qos}));
        }
        "PersistentVolume" => {
            let now = crate::meta::now_rfc3339();
            set(
                obj,
                "status",
                json!({"phase": "Pending", "lastPhaseTransitionTime": now}),
            );
        }
        // Go writes the status struct's `replicas` without omitempty.
        "ReplicationController" => set(obj, "status", json!({"replicas": 0})),
        _ => {}
    }
}

/// `SetDefaults_Pod` (requests default to limits, service links on, host-network ports), the
/// service account the ServiceAccount plugin gives a pod, and the pod spec's own defaults.
fn pod_object(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    pod::pod_spec(spec);
    for key in ["containers", "initContainers"] {
        each(spec, key, requests_from_limits);
    }
    default_ptr(spec, "enableServiceLinks", json!(true));
    // The ServiceAccount admission plugin names the namespace's `default` account when the pod
    // names none; v1's `serviceAccount` is the deprecated mirror of `serviceAccountName`, which
    // conversion fills both ways.
    let account = [
        str_of(spec, "serviceAccountName"),
        str_of(spec, "serviceAccount"),
    ]
    .into_iter()
    .find(|a| !a.is_empty())
    .unwrap_or("default")
    .to_string();
    set(spec, "serviceAccountName", json!(account));
    set(spec, "serviceAccount", json!(account));
    if spec.get("hostNetwork") == Some(&Value::Bool(true)) {
        for key in ["containers", "initContainers"] {
            each(spec, key, |c| {
                each(c, "ports", |p| {
                    if is_nil(p.get("hostPort")) || p["hostPort"] == 0 {
                        let port = p.get("containerPort").cloned().unwrap_or(Value::Null);
                        set(p, "hostPort", port);
                    }
                })
            });
        }
    }
}

/// A container with limits but no request for a resource requests its limit.
fn requests_from_limits(c: &mut Value) {
    let Some(limits) = c
        .pointer("/resources/limits")
        .and_then(Value::as_object)
        .cloned()
    else {
        return;
    };
    let Some(requests) = child(c, "resources").and_then(|r| child(r, "requests")) else {
        return;
    };
    if let Some(requests) = requests.as_object_mut() {
        for (k, v) in limits {
            requests.entry(k).or_insert(v);
        }
    }
}

/// `qos.GetPodQOS`: Guaranteed when every container limits and requests (equal) CPU and memory,
/// BestEffort when none requests or limits anything, Burstable otherwise.
fn qos_class(obj: &Value) -> &'static str {
    let containers: Vec<&Value> = ["containers", "initContainers"]
        .iter()
        .filter_map(|k| obj.pointer(&format!("/spec/{k}")).and_then(Value::as_array))
        .flatten()
        .collect();
    let compute = |m: Option<&Value>| -> Map<String, Value> {
        m.and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| matches!(k.as_str(), "cpu" | "memory"))
                    .filter(|(_, v)| v.as_str().is_some_and(|q| !is_zero(q)))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut any = false;
    let mut guaranteed = true;
    for c in containers {
        let requests = compute(c.pointer("/resources/requests"));
        let limits = compute(c.pointer("/resources/limits"));
        any |= !requests.is_empty() || !limits.is_empty();
        let full = limits.len() == 2
            && requests
                .iter()
                .all(|(k, v)| limits.get(k).is_some_and(|l| same_quantity(l, v)));
        guaranteed &= full;
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

fn is_zero(q: &str) -> bool {
    super::quantity::canonical(q).is_some_and(|c| c == "0")
}

fn same_quantity(a: &Value, b: &Value) -> bool {
    let canon = |v: &Value| v.as_str().and_then(super::quantity::canonical);
    canon(a).is_some() && canon(a) == canon(b)
}

/// `SetDefaults_ReplicationController`: selector and labels from the template's labels,
/// one replica; and the template's pod defaults.
fn replication_controller(obj: &mut Value) {
    let template_labels = obj
        .pointer("/spec/template/metadata/labels")
        .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
        .cloned();
    if let Some(labels) = template_labels {
        let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(Map::is_empty);
        if empty(obj.pointer("/spec/selector")) {
            if let Some(spec) = child(obj, "spec") {
                set(spec, "selector", labels.clone());
            }
        }
        if empty(obj.pointer("/metadata/labels")) {
            if let Some(meta) = child(obj, "metadata") {
                set(meta, "labels", labels);
            }
        }
    }
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_ptr(spec, "replicas", json!(1));
    if let Some(t) = existing(spec, "template") {
        pod::template(t);
    }
}

/// `SetDefaults_PersistentVolume`, and the volume source defaults a PV shares with pods.
fn persistent_volume(obj: &mut Value) {
    if let Some(spec) = child(obj, "spec") {
        default_str(spec, "persistentVolumeReclaimPolicy", "Retain");
        default_ptr(spec, "volumeMode", json!("Filesystem"));
        if let Some(c) = existing(spec, "capacity") {
            quantities(c);
        }
        if let Some(h) = existing(spec, "hostPath") {
            default_ptr(h, "type", json!(""));
        }
    }
    if let Some(status) = existing(obj, "status") {
        default_str(status, "phase", "Pending");
    }
}

/// `SetDefaults_NodeStatus`: allocatable is the capacity unless given.
fn node(obj: &mut Value) {
    let Some(status) = existing(obj, "status") else {
        return;
    };
    for key in ["capacity", "allocatable"] {
        if let Some(q) = existing(status, key) {
            quantities(q);
        }
    }
    if is_nil(status.get("allocatable")) {
        if let Some(capacity) = status.get("capacity").filter(|c| c.is_object()).cloned() {
            set(status, "allocatable", capacity);
        }
    }
}

/// `SetDefaults_LimitRangeItem`: for containers, the default limit is the max, the default
/// request the default limit, else the min.
fn limit_range(obj: &mut Value) {
    let Some(spec) = existing(obj, "spec") else {
        return;
    };
    each(spec, "limits", |item| {
        for key in [
            "max",
            "min",
            "default",
            "defaultRequest",
            "maxLimitRequestRatio",
        ] {
            if let Some(q) = existing(item, key) {
                quantities(q);
            }
        }
        if str_of(item, "type") != "Container" {
            return;
        }
        // Go's empty maps are left out of JSON, so a map is only made to hold a value.
        let fill = |item: &mut Value, into: &str, from: &str| {
            let Some(source) = item
                .get(from)
                .and_then(Value::as_object)
                .filter(|m| !m.is_empty())
                .cloned()
            else {
                return;
            };
            if let Some(target) = child(item, into).and_then(Value::as_object_mut) {
                for (k, v) in source {
                    target.entry(k).or_insert(v);
                }
            }
        };
        fill(item, "default", "max");
        fill(item, "defaultRequest", "default");
        fill(item, "defaultRequest", "min");
    });
}
