//! A binding out of its reach (see [`crate::propagation::scope`]) gets no Works: ones it had
//! are deleted, so the member copies go, and it says why in `FullyApplied=False`, reason
//! `OutOfScope`, with no per-cluster status.

use std::sync::Arc;

use flotilla_apis::conditions::{self, Set};
use flotilla_apis::work::v1alpha1::{Work, CONDITION_FULLY_APPLIED, REASON_OUT_OF_SCOPE};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde_json::json;

use super::deletion::delete_work;
use super::MANAGER;
use crate::propagation::binding::BindingObject;
use crate::{Error, Result};

/// Refuses binding `b`: deletes its `works` and sets `FullyApplied=False` (`OutOfScope`,
/// `why`) with no per-cluster status, written as the binding controller.
pub(super) async fn refuse<B: BindingObject>(
    hub: &Client,
    b: &B,
    works: &[Arc<Work>],
    why: &str,
) -> Result<()> {
    let name = b.name_any();
    tracing::warn!(binding = %name, namespace = ?b.scope_namespace(), reason = %why, "binding refused");
    for w in works
        .iter()
        .filter(|w| w.meta().deletion_timestamp.is_none())
    {
        delete_work(hub, w).await?;
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
    // The answer (the binding with its whole status) is not read.
    flotilla_watch::quiet::patch(
        &B::api(hub.clone(), b.scope_namespace()),
        &name,
        Some("status"),
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
    .map_err(Error::hub(format!("write the status of binding {name}")))?;
    Ok(())
}
