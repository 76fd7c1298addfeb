//! The propagation controllers' side of [`flotilla_apis::scope`]: which object a binding may
//! propagate, checked before the object is read (its reference, then its kind's scope) and
//! again on every rendered manifest.
//!
//! The hub refuses such bindings at admission already; this is the root check, for bindings
//! stored before that, or written by something that bypasses admission. The binding controller
//! gives a refused binding no Works ([`super::works`]); the dependencies distributor does not
//! follow its references.

use flotilla_apis::scope::{binding_reference, hub_internal};
use flotilla_apis::work::v1alpha1::ObjectReference;
use serde_json::Value;

/// Why a binding in namespace `ns` (`None`: a ClusterResourceBinding) may not propagate
/// `resource`, judged from the reference alone.
pub fn refused_reference(ns: Option<&str>, resource: &ObjectReference) -> Option<String> {
    hub_internal(&resource.api_version, resource.namespace.as_deref())
        .or_else(|| ns.and_then(|ns| binding_reference(ns, resource.namespace.as_deref())))
}

/// Why a binding in namespace `ns` may not propagate an object of `kind`, once discovery said
/// whether the kind is `namespaced`: a ResourceBinding never reaches a cluster-scoped object,
/// whatever namespace its reference names.
pub fn refused_kind(ns: Option<&str>, kind: &str, namespaced: bool) -> Option<String> {
    match ns {
        Some(ns) if !namespaced => Some(format!(
            "{kind} is cluster-scoped: a ResourceBinding in namespace {ns} propagates only \
             objects of namespace {ns}; cluster-scoped objects need a ClusterPropagationPolicy"
        )),
        _ => None,
    }
}

/// Why a manifest rendered for a binding in namespace `ns` may not go into a Work: a
/// namespaced binding's manifests all live in its namespace, after overrides too.
pub fn refused_manifest(ns: Option<&str>, manifest: &Value) -> Option<String> {
    let ns = ns?;
    let theirs = manifest
        .pointer("/metadata/namespace")
        .and_then(Value::as_str);
    (theirs != Some(ns)).then(|| {
        format!(
            "the rendered manifest is not in namespace {ns} (metadata.namespace {}); a \
             ResourceBinding's Works stay in its namespace",
            theirs.map_or_else(|| "unset".to_owned(), |t| format!("{t:?}"))
        )
    })
}

#[cfg(test)]
mod tests;
