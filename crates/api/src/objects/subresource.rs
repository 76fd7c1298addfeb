//! What a client's update of one part of an object may change, as kube-apiserver's registry
//! strategies decide it (their `PrepareForUpdate`): the main resource of a kind with a status
//! subresource leaves status alone; `/status` leaves the spec alone and, for most built-in kinds,
//! keeps the metadata the client sent (labels, annotations, finalizers, ownerReferences), so a
//! patch to `/status` that also sets an annotation stores it; `/finalize` changes only the
//! namespace's finalizers.
//!
//! The exceptions to "metadata kept" are per kind, and listed in [`StatusMeta::of`].

use serde_json::{json, Value};

use crate::meta::set_meta;
use crate::registry::ResourceInfo;

/// The object an update of `sub` stores, from the stored `old` and the client's `new`.
pub(super) fn merge_for_subresource(
    res: &ResourceInfo,
    sub: Option<&str>,
    old: &Value,
    mut new: Value,
) -> Value {
    match sub {
        None if res.status => {
            copy_field(old, &mut new, "status");
            new
        }
        Some("status") => for_status(res, old, new),
        Some("finalize") => {
            let mut out = old.clone();
            out["spec"]["finalizers"] = new
                .pointer("/spec/finalizers")
                .cloned()
                .unwrap_or(json!([]));
            out
        }
        _ => new,
    }
}

/// Which of the client's metadata an update of `/status` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StatusMeta {
    /// All of it (most built-in kinds: the strategy resets only the spec).
    Kept,
    /// All but the labels (Deployments).
    KeptButLabels,
    /// All but the ownerReferences (Pods).
    KeptButOwners,
    /// Labels, annotations, finalizers and ownerReferences stay as stored (kube's
    /// `ResetObjectMetaForStatus`; APIServices reset the same four by hand).
    Reset,
    /// None: the stored object with the client's status (custom resources, FlowSchemas and
    /// PriorityLevelConfigurations).
    StatusOnly,
}

impl StatusMeta {
    /// The rule of `res`, as its kube-apiserver status strategy has it (v1.32).
    pub(super) fn of(res: &ResourceInfo) -> StatusMeta {
        if res.custom {
            return StatusMeta::StatusOnly;
        }
        match (res.group.as_str(), res.plural.as_str()) {
            ("flowcontrol.apiserver.k8s.io", _) => StatusMeta::StatusOnly,
            ("apps", "deployments") => StatusMeta::KeptButLabels,
            ("", "pods") => StatusMeta::KeptButOwners,
            ("admissionregistration.k8s.io", "validatingadmissionpolicies")
            | ("networking.k8s.io", "servicecidrs")
            | ("resource.k8s.io", "resourceclaims")
            | ("storage.k8s.io", "volumeattachments")
            | ("internal.apiserver.k8s.io", "storageversions")
            | ("storagemigration.k8s.io", "storageversionmigrations")
            | ("apiregistration.k8s.io", "apiservices") => StatusMeta::Reset,
            // CustomResourceDefinitions too: their strategy means to reset metadata but resets
            // the new object's to itself, so the client's stays.
            _ => StatusMeta::Kept,
        }
    }
}

/// An update of `/status`: the client's object with the stored spec, and the stored metadata
/// where the kind's strategy resets it. The resourceVersion the client sent stays its
/// precondition in every case.
fn for_status(res: &ResourceInfo, old: &Value, mut new: Value) -> Value {
    let rule = StatusMeta::of(res);
    if rule == StatusMeta::StatusOnly {
        // `new` is the stored object but for what the client changed (most often only the
        // status), so only the parts that differ are copied back.
        let rv = new.pointer("/metadata/resourceVersion").cloned();
        restore_all_but(old, &mut new, "status");
        if let Some(rv) = rv {
            set_meta(&mut new, "resourceVersion", rv);
        }
        return new;
    }
    copy_field(old, &mut new, "spec");
    let reset: &[&str] = match rule {
        StatusMeta::KeptButLabels => &["labels"],
        StatusMeta::KeptButOwners => &["ownerReferences"],
        StatusMeta::Reset => &["labels", "annotations", "finalizers", "ownerReferences"],
        StatusMeta::Kept | StatusMeta::StatusOnly => &[],
    };
    for field in reset {
        match old.pointer(&format!("/metadata/{field}")) {
            Some(v) => set_meta(&mut new, field, v.clone()),
            None => {
                crate::meta::remove_meta(&mut new, field);
            }
        }
    }
    new
}

/// `to[field] = from[field]`, the field removed from `to` where `from` has none.
fn copy_field(from: &Value, to: &mut Value, field: &str) {
    let Some(o) = to.as_object_mut() else { return };
    match from.get(field) {
        Some(v) if o.get(field) != Some(v) => {
            o.insert(field.into(), v.clone());
        }
        Some(_) => {}
        None => {
            o.remove(field);
        }
    }
}

/// `to` made `from` again in every top-level field but `kept`.
fn restore_all_but(from: &Value, to: &mut Value, kept: &str) {
    let (Some(f), Some(t)) = (from.as_object(), to.as_object_mut()) else {
        let mut out = from.clone();
        copy_field(to, &mut out, kept);
        *to = out;
        return;
    };
    t.retain(|k, _| k == kept || f.contains_key(k));
    for (k, v) in f {
        if k != kept && t.get(k) != Some(v) {
            t.insert(k.clone(), v.clone());
        }
    }
}

#[cfg(test)]
mod tests;
