//! The dependencies distributor's decisions, as functions of plain values: whether a workload
//! binding's dependencies follow it, which workloads an attached binding forgets and which
//! attached bindings a workload releases, the attached binding made for a dependency, and the
//! write that changes an attached binding's `requiredBy` list.

use std::collections::BTreeSet;
use std::sync::Arc;

use flotilla_apis::policy::v1alpha1::ConflictResolution;
use flotilla_apis::work::v1alpha1::{BindingSnapshot, ResourceBinding};
use kube::ResourceExt;
use serde_json::{json, Value};

use super::references::Dependency;
use super::DEPENDENCY_VERSION_ANNOTATION;
use crate::propagation::binding::BINDING_FINALIZER;
use crate::propagation::workload::binding_name;

/// Whether workload binding `b`'s dependencies follow it now: it asks for that, is scheduled
/// somewhere and is not being deleted.
pub(super) fn follows(b: &ResourceBinding) -> bool {
    b.spec.propagate_deps && !b.spec.clusters.is_empty() && b.metadata.deletion_timestamp.is_none()
}

/// The workloads an attached binding in namespace `ns` forgets, of those its `required_by`
/// lists: the ones gone or no longer propagating their dependencies (`propagates(namespace,
/// name)` says whether a workload binding exists and does).
pub(super) fn forgotten(
    required_by: &[BindingSnapshot],
    ns: &str,
    propagates: impl Fn(&str, &str) -> bool,
) -> Vec<String> {
    required_by
        .iter()
        .filter(|r| !propagates(r.namespace.as_deref().unwrap_or(ns), &r.name))
        .map(|r| r.name.clone())
        .collect()
}

/// What the attached bindings of workload binding `ns/name` say of it: where it runs.
pub(super) fn snapshot(ns: &str, b: &ResourceBinding) -> BindingSnapshot {
    BindingSnapshot {
        namespace: Some(ns.to_owned()),
        name: b.name_any(),
        clusters: b.spec.clusters.clone(),
    }
}

/// The attached bindings (of `bindings`) in `ns` that list the workload binding `name`.
pub(super) fn attached_to(
    bindings: Vec<Arc<ResourceBinding>>,
    ns: &str,
    name: &str,
) -> Vec<Arc<ResourceBinding>> {
    bindings
        .into_iter()
        .filter(|a| a.namespace().as_deref() == Some(ns))
        .filter(|a| a.spec.required_by.iter().any(|r| r.name == name))
        .collect()
}

/// Of the bindings a workload is `attached` to, the names of those it no longer needs: it does
/// not refer to their objects any more (`wanted`).
pub(super) fn released(attached: &[Arc<ResourceBinding>], wanted: &[Dependency]) -> Vec<String> {
    let kept: BTreeSet<String> = wanted
        .iter()
        .map(|d| binding_name(&d.name, d.kind))
        .collect();
    attached
        .iter()
        .map(|a| a.name_any())
        .filter(|a| !kept.contains(a))
        .collect()
}

/// Lists `snapshot` in `required`, in place of an older snapshot of the same workload.
pub(super) fn list(required: &mut Vec<BindingSnapshot>, snapshot: &BindingSnapshot) {
    match required.iter_mut().find(|r| r.name == snapshot.name) {
        Some(r) => *r = snapshot.clone(),
        None => required.push(snapshot.clone()),
    }
}

/// The attached binding for dependency `d` (uid `uid`, resourceVersion `version`) in `ns`,
/// first required by the workload of `snapshot`: owned by the object, no placement of its own.
pub(super) fn attached_binding(
    ns: &str,
    d: &Dependency,
    uid: &str,
    version: &str,
    snapshot: &BindingSnapshot,
    conflict: ConflictResolution,
) -> Value {
    json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": "ResourceBinding",
        "metadata": {
            "name": binding_name(&d.name, d.kind),
            "namespace": ns,
            "annotations": {DEPENDENCY_VERSION_ANNOTATION: version},
            // The binding controller's cleanup finalizer, from the start (as the detector's).
            "finalizers": [BINDING_FINALIZER],
            "ownerReferences": [{
                "apiVersion": "v1", "kind": d.kind, "name": d.name, "uid": uid,
                "controller": true, "blockOwnerDeletion": true,
            }],
        },
        "spec": {
            "resource": {"apiVersion": "v1", "kind": d.kind, "namespace": ns, "name": d.name, "uid": uid},
            "requiredBy": [snapshot],
            "conflictResolution": conflict,
        },
    })
}

/// A write to an attached binding's `requiredBy` list.
#[derive(Debug, PartialEq)]
pub(super) enum Write {
    /// Nothing changes.
    None,
    /// No workload and no placement of its own left: the binding goes (guarded by the
    /// resourceVersion read).
    Delete,
    /// This merge patch, guarded by the resourceVersion read.
    Patch(Value),
}

/// The write that changes binding `b`'s `requiredBy` list with `edit` (kept sorted), and its
/// dependency version annotation to `version`, if given and different.
pub(super) fn required_by_write(
    b: &ResourceBinding,
    version: Option<&str>,
    edit: impl Fn(&mut Vec<BindingSnapshot>),
) -> Write {
    let mut required = b.spec.required_by.clone();
    edit(&mut required);
    required.sort_by(|x, y| (&x.namespace, &x.name).cmp(&(&y.namespace, &y.name)));
    let stamp = b.annotations().get(DEPENDENCY_VERSION_ANNOTATION);
    let restamp = version.filter(|v| stamp.map(String::as_str) != Some(v));
    if required == b.spec.required_by && restamp.is_none() {
        return Write::None;
    }
    if required.is_empty() && b.spec.placement.is_none() {
        return Write::Delete;
    }
    let mut patch = json!({
        "metadata": {"resourceVersion": b.resource_version()},
        "spec": {"requiredBy": required},
    });
    if let Some(v) = restamp {
        patch["metadata"]["annotations"] = json!({DEPENDENCY_VERSION_ANNOTATION: v});
    }
    Write::Patch(patch)
}
