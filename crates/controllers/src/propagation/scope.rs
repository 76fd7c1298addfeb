//! The propagation controllers' side of [`flotilla_apis::scope`]: which object a binding may
//! propagate, checked before the object is read (its reference, then its kind's scope) and
//! again on every rendered manifest, and the status of a binding refused for it.
//!
//! The hub refuses such bindings at admission already; this is the root check, for bindings
//! stored before that, or written by something that bypasses admission. A refused binding gets
//! no Works (ones it had are deleted, so the member copies go) and says why in
//! `FullyApplied=False`, reason `OutOfScope`.

use std::sync::Arc;

use flotilla_apis::conditions::{self, Set};
use flotilla_apis::scope::{binding_reference, hub_internal};
use flotilla_apis::work::v1alpha1::{
    ObjectReference, Work, CONDITION_FULLY_APPLIED, REASON_OUT_OF_SCOPE,
};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde_json::{json, Value};

use super::binding::BindingObject;
use crate::{Error, Result};

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

/// Refuses binding `b`: deletes its `works` and sets `FullyApplied=False` (`OutOfScope`,
/// `why`) with no per-cluster status, written as field manager `manager`.
pub async fn refuse<B: BindingObject>(
    hub: &Client,
    b: &B,
    works: &[Arc<Work>],
    why: &str,
    manager: &str,
) -> Result<()> {
    let name = b.name_any();
    tracing::warn!(binding = %name, namespace = ?b.scope_namespace(), reason = %why, "binding refused");
    for w in works
        .iter()
        .filter(|w| w.meta().deletion_timestamp.is_none())
    {
        super::works::delete_work(hub, w).await?;
    }
    let mut conds = b.status().map(|s| s.conditions.clone()).unwrap_or_default();
    let changed = conditions::set(
        &mut conds,
        Set {
            type_: CONDITION_FULLY_APPLIED,
            status: "False",
            reason: REASON_OUT_OF_SCOPE,
            message: why,
        },
        Timestamp::now(),
    );
    let cleared = b.status().is_none_or(|s| s.aggregated_status.is_empty());
    if !changed && cleared {
        return Ok(());
    }
    let fully = conditions::find(&conds, CONDITION_FULLY_APPLIED);
    let mut body = json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": B::kind(&()),
        "metadata": {"name": name},
        "status": {"aggregatedStatus": [], "conditions": [fully]},
    });
    if let Some(ns) = b.scope_namespace() {
        body["metadata"]["namespace"] = json!(ns);
    }
    B::api(hub.clone(), b.scope_namespace())
        .patch_status(
            &name,
            &PatchParams::apply(manager).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(Error::hub(format!("write the status of binding {name}")))?;
    Ok(())
}

#[cfg(test)]
mod tests;
