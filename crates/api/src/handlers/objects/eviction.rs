//! `pods/eviction` and PodDisruptionBudgets, as kube-apiserver's eviction handler weighs them:
//! a pod that is not running (pending, finished, or already being deleted) goes at once; a
//! running pod covered by one budget goes only while the budget allows a disruption, which the
//! eviction then uses up (`disruptionsAllowed` one less, the pod in `disruptedPods`); more than
//! one budget is an error.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{ApiError, Result};
use crate::meta::{meta_str, now_rfc3339};
use crate::objects::{guaranteed_update, Writer};
use crate::selector::LabelSelector;
use crate::Api;

const VIOLATES: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// May `pod` (in `ns`) be evicted now? Uses up one disruption of its budget when it may.
pub(super) async fn admit(api: &Arc<Api>, ns: &str, pod: &Value, dry_run: bool) -> Result<()> {
    let phase = pod
        .pointer("/status/phase")
        .and_then(Value::as_str)
        .unwrap_or("");
    let deleting = pod.pointer("/metadata/deletionTimestamp").is_some();
    if deleting || matches!(phase, "Pending" | "Succeeded" | "Failed" | "") {
        return Ok(());
    }
    let snap = api.registry.snapshot();
    let Some(res) = snap.get("policy", "v1", "poddisruptionbudgets").cloned() else {
        return Ok(());
    };
    let (budgets, _, _) = api.cache.list(&res.key_prefix(Some(ns)), None, None, |o| {
        let b = o.value();
        b.pointer("/spec/selector")
            .and_then(|s| LabelSelector::from_json(s).ok())
            .is_some_and(|s| s.matches_object(pod))
    });
    let budget = match budgets.as_slice() {
        [] => return Ok(()),
        [one] => one.value(),
        _ => {
            return Err(ApiError::new(
                500,
                "InternalError",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            ))
        }
    };
    let name = meta_str(&budget, "name").unwrap_or("").to_string();
    let int = |p: &str| budget.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    if int("/status/observedGeneration") < int("/metadata/generation") {
        return Err(too_many_requests(format!(
            "The disruption budget {name} is still being processed by the server."
        )));
    }
    if int("/status/disruptionsAllowed") <= 0 {
        return Err(too_many_requests(format!(
            "The disruption budget {name} needs {} healthy pods and has {} currently",
            int("/status/desiredHealthy"),
            int("/status/currentHealthy")
        )));
    }
    let pod_name = meta_str(pod, "name").unwrap_or("").to_string();
    let key = res.key(Some(ns), &name);
    guaranteed_update(api, Writer::Server, &res, &key, &name, dry_run, |cur| {
        let mut next = cur.clone();
        let allowed = cur
            .pointer("/status/disruptionsAllowed")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if allowed <= 0 {
            return Err(too_many_requests(format!(
                "The disruption budget {name} needs more healthy pods"
            )));
        }
        next["status"]["disruptionsAllowed"] = json!(allowed - 1);
        if !next["status"]["disruptedPods"].is_object() {
            next["status"]["disruptedPods"] = json!({});
        }
        next["status"]["disruptedPods"][&pod_name] = json!(now_rfc3339());
        Ok(next)
    })
    .await?;
    Ok(())
}

/// 429 with kube's DisruptionBudget cause.
fn too_many_requests(cause: String) -> ApiError {
    ApiError {
        details: Some(json!({"causes": [{"reason": "DisruptionBudget", "message": cause}]})),
        ..ApiError::new(429, "TooManyRequests", VIOLATES)
    }
}
