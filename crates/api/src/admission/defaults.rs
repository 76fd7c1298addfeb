//! The defaults kube-apiserver gives built-in kinds, so an object reads back from the hub as it
//! would from a cluster (and what flotilla later propagates and compares is what a member
//! cluster would hold).
//!
//! Kubernetes applies its `SetDefaults_*` functions whenever it decodes an object — a request
//! body, and what it reads back from etcd — so every create and update here passes through
//! [`apply`] (and the update loop applies it to the stored object too, so comparing old and new
//! never sees a default as a change). [`on_create`] adds what kube-apiserver's create strategies
//! set once (a namespace's `kubernetes` finalizer and phase).
//!
//! What is deliberately not here: values Kubernetes *allocates* rather than defaults (a
//! Service's `clusterIP`/`clusterIPs`, `ipFamilies`, node ports; a Job's generated selector and
//! `controller-uid` labels, which a member cluster would refuse), and the empty structs Go's
//! encoder writes for zero values (`resources: {}`, `creationTimestamp: null`).
//!
//! Helpers follow Go's zero values: a string field is defaulted when absent, null or `""`, an
//! integer when absent, null or `0`, a pointer only when absent or null.

mod cluster_kinds;
mod core_kinds;
mod pod;
mod quantity;
mod service;
mod workloads;

use serde_json::{json, Map, Value};

use crate::registry::ResourceInfo;

/// Defaults every write of a built-in kind gets (`SetObjectDefaults_<Kind>`).
pub fn apply(res: &ResourceInfo, obj: &mut Value) {
    defaulted(res, obj);
}

/// Whether [`apply`] has any default for `res`'s kind; when not, an object of it reads back
/// exactly as stored.
pub fn any(res: &ResourceInfo) -> bool {
    defaulted(res, &mut Value::Object(Map::new()))
}

/// [`apply`]; whether `res`'s kind has defaults at all (asked of [`any`] with an empty object).
fn defaulted(res: &ResourceInfo, obj: &mut Value) -> bool {
    if res.custom {
        return false;
    }
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Namespace") => namespace(obj),
        ("", "Secret") => secret(obj),
        ("", "Service") => service::service(obj),
        ("", "PersistentVolumeClaim") => pod::persistent_volume_claim(obj),
        ("", "Endpoints") => each(obj, "subsets", |s| {
            each(s, "ports", |p| default_str(p, "protocol", "TCP"))
        }),
        ("apps", "Deployment") => workloads::deployment(obj),
        ("apps", "StatefulSet") => workloads::stateful_set(obj),
        ("apps", "DaemonSet") => workloads::daemon_set(obj),
        ("apps", "ReplicaSet") => workloads::replica_set(obj),
        ("batch", "Job") => workloads::job(obj),
        ("batch", "CronJob") => workloads::cron_job(obj),
        ("autoscaling", "HorizontalPodAutoscaler") => workloads::horizontal_pod_autoscaler(obj),
        ("networking.k8s.io", "NetworkPolicy") => network_policy(obj),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => binding(obj),
        (crate::flowcontrol::GROUP, kind) => crate::flowcontrol::defaults::apply(kind, obj),
        (super::policy::GROUP, kind) => super::policy::kinds::defaults(kind, obj),
        (crate::aggregator::GROUP, "APIService") => crate::aggregator::validation::defaults(obj),
        // The smaller groups' modules say whether they know the kind.
        (group, kind) => {
            return (group.is_empty() && core_kinds::apply(kind, obj))
                || cluster_kinds::apply(group, kind, obj);
        }
    }
    true
}

/// Update-time defaults: what an update keeps of the stored object when it leaves it out, then
/// [`apply`]. `old` is the stored object, already defaulted.
pub fn on_update(res: &ResourceInfo, old: &Value, new: &mut Value) {
    if !res.custom && res.group.is_empty() && res.kind == "Service" {
        service::carry_over(old, new);
    }
    apply(res, new);
}

/// Create-time defaults: what the create strategies set, then [`apply`].
pub fn on_create(res: &ResourceInfo, obj: &mut Value) {
    if !res.custom && res.group.is_empty() && res.kind == "Namespace" {
        obj["spec"] = json!({"finalizers": ["kubernetes"]});
        obj["status"] = json!({"phase": "Active"});
    }
    if !res.custom && res.group.is_empty() {
        core_kinds::on_create(&res.kind, obj);
    }
    if !res.custom && res.group == crate::aggregator::GROUP {
        crate::aggregator::validation::on_create(obj);
    }
    apply(res, obj);
}

// === helpers ===

fn is_nil(v: Option<&Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// `obj[key]` (only if `obj` is an object), created as `{}` when absent or null.
fn child<'a>(obj: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    let m = obj.as_object_mut()?;
    let v = m.entry(key).or_insert(Value::Null);
    if v.is_null() {
        *v = Value::Object(Map::new());
    }
    v.is_object().then_some(v)
}

/// `obj[key]` if it is present and an object.
fn existing<'a>(obj: &'a mut Value, key: &str) -> Option<&'a mut Value> {
    obj.get_mut(key).filter(|v| v.is_object())
}

/// Each element of the array at `obj[key]`, if there is one.
fn each(obj: &mut Value, key: &str, mut f: impl FnMut(&mut Value)) {
    if let Some(items) = obj.get_mut(key).and_then(Value::as_array_mut) {
        items.iter_mut().filter(|v| v.is_object()).for_each(&mut f);
    }
}

fn set(obj: &mut Value, key: &str, v: Value) {
    if let Some(m) = obj.as_object_mut() {
        m.insert(key.to_string(), v);
    }
}

/// A pointer field: set when absent or null.
fn default_ptr(obj: &mut Value, key: &str, v: Value) {
    if is_nil(obj.get(key)) {
        set(obj, key, v);
    }
}

/// A string field: set when absent, null or empty.
fn default_str(obj: &mut Value, key: &str, v: &str) {
    if is_nil(obj.get(key)) || obj[key] == "" {
        set(obj, key, json!(v));
    }
}

/// An integer field: set when absent, null or zero.
fn default_int(obj: &mut Value, key: &str, v: i64) {
    if is_nil(obj.get(key)) || obj[key] == 0 {
        set(obj, key, json!(v));
    }
}

/// The string value of `obj[key]` ("" when absent or not a string).
fn str_of<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

// === small kinds ===

/// `SetDefaults_Namespace` (the name label, always overwritten) and
/// `SetDefaults_NamespaceStatus`.
/// A Secret: `type` Opaque, and `stringData` merged into `data` (base64), overriding keys that
/// both have, as the v1 → internal conversion does: `stringData` is write-only and never stored.
fn secret(obj: &mut Value) {
    default_str(obj, "type", "Opaque");
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    let Some(Value::Object(string_data)) = o.remove("stringData") else {
        return;
    };
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD;
    let data = o
        .entry("data")
        .and_modify(|d| {
            if !d.is_object() {
                *d = Value::Object(Map::new());
            }
        })
        .or_insert_with(|| Value::Object(Map::new()));
    if let Some(data) = data.as_object_mut() {
        for (k, v) in string_data {
            let text = match v {
                Value::String(s) => s,
                other => other.to_string(),
            };
            data.insert(k, Value::String(b64.encode(text)));
        }
    }
}

fn namespace(obj: &mut Value) {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .map(String::from);
    if let Some(name) = name {
        if let Some(labels) = child(obj, "metadata").and_then(|m| child(m, "labels")) {
            set(labels, "kubernetes.io/metadata.name", json!(name));
        }
    }
    if let Some(status) = child(obj, "status") {
        default_str(status, "phase", "Active");
    }
}

/// `SetDefaults_NetworkPolicy`: ports are TCP; no `policyTypes` means Ingress (and Egress when
/// there are egress rules).
fn network_policy(obj: &mut Value) {
    let Some(spec) = existing(obj, "spec") else {
        return;
    };
    for rules in ["ingress", "egress"] {
        each(spec, rules, |rule| {
            each(rule, "ports", |p| default_ptr(p, "protocol", json!("TCP")))
        });
    }
    let none = spec
        .get("policyTypes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if none {
        let egress = spec
            .get("egress")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty());
        let types = if egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
        set(spec, "policyTypes", types);
    }
}

/// `SetDefaults_RoleBinding`/`ClusterRoleBinding` and `SetDefaults_Subject`.
fn binding(obj: &mut Value) {
    const RBAC: &str = "rbac.authorization.k8s.io";
    if let Some(role_ref) = existing(obj, "roleRef") {
        default_str(role_ref, "apiGroup", RBAC);
    }
    each(obj, "subjects", |s| {
        if str_of(s, "apiGroup").is_empty() {
            // A ServiceAccount's group is the core group: "", which Go leaves out.
            if matches!(str_of(s, "kind"), "User" | "Group") {
                set(s, "apiGroup", json!(RBAC));
            }
        }
    });
}

#[cfg(test)]
mod tests;
