//! The PodDisruptionBudget status loop, as kube-controller-manager's disruption controller
//! keeps it: every budget's status says how many of its pods (the pods of its namespace its
//! selector matches) are healthy (Ready, not being deleted), how many must stay so, how many
//! may be disrupted, with the `DisruptionAllowed` condition, and `observedGeneration` once the
//! current spec is counted (clients wait for it, as the upstream suite does).
//!
//! The hub runs no pods, so a budget's pods are the pods stored on the hub; where they are
//! propagated, members' own controllers keep their budgets. The expected count is the number
//! of matching pods (kube reads it from the pods' controllers' scale for a percentage or
//! `maxUnavailable`; the hub runs no workload controllers, so the pods stored are what there
//! is). Disrupted pods recorded by an eviction are kept.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::registry::ResourceInfo;
use crate::selector::LabelSelector;
use crate::Api;

pub(super) async fn run(api: Arc<Api>) {
    // The worker ends with the loop.
    let mut tasks = tokio::task::JoinSet::new();
    let tx = super::namespace_queue::start(
        &mut tasks,
        api.clone(),
        "PodDisruptionBudget status",
        |api, ns| async move { sync(&api, &ns).await },
    );
    // Only a budget's or a pod's change can change a budget's status.
    let relevant = |key: &str| key.contains("/poddisruptionbudgets/") || key.contains("/pods/");
    super::namespace_queue::follow_namespaces(api, tx, "policy", "poddisruptionbudgets", relevant)
        .await;
}

fn resource(api: &Api, group: &str, plural: &str) -> Option<ResourceInfo> {
    // Both kinds are served at v1 (core pods, policy/v1 budgets).
    api.registry
        .snapshot()
        .get(group, "v1", plural)
        .map(|r| (**r).clone())
}

/// Write the status of every budget of `ns` whose status is not what it should read.
async fn sync(api: &Arc<Api>, ns: &str) -> crate::error::Result<()> {
    let Some(pdbs) = resource(api, "policy", "poddisruptionbudgets") else {
        return Ok(());
    };
    let pods: Vec<Value> = match resource(api, "", "pods") {
        Some(p) => {
            let (all, _, _) = api
                .cache
                .list(&p.key_prefix(Some(ns)), None, None, |_| true);
            all.iter().map(|o| o.value()).collect()
        }
        None => Vec::new(),
    };
    super::namespace_queue::write_statuses(api, &pdbs, ns, |b| status(b, &pods, &now())).await
}

fn now() -> String {
    crate::meta::now_rfc3339()
}

/// The status `pdb` should have with the pods of its namespace; `now` stamps a condition that
/// changes.
pub(super) fn status(pdb: &Value, pods: &[Value], now: &str) -> Value {
    let selector = pdb
        .pointer("/spec/selector")
        .map(LabelSelector::from_json)
        .and_then(Result::ok)
        .unwrap_or_else(LabelSelector::nothing);
    let matching: Vec<&Value> = pods
        .iter()
        .filter(|p| p.pointer("/metadata/deletionTimestamp").is_none())
        .filter(|p| selector.matches_object(p))
        .collect();
    let expected = matching.len() as i64;
    let healthy = matching.iter().filter(|p| ready(p)).count() as i64;
    let spec = &pdb["spec"];
    let desired = if let Some(min) = spec.get("minAvailable") {
        scaled(min, expected, true)
    } else if let Some(max) = spec.get("maxUnavailable") {
        (expected - scaled(max, expected, true)).max(0)
    } else {
        expected
    };
    let allowed = if expected <= 0 {
        0
    } else {
        (healthy - desired).max(0)
    };
    let (cond, reason) = if allowed > 0 {
        ("True", "SufficientPods")
    } else {
        ("False", "InsufficientPods")
    };
    let old = &pdb["status"];
    let old_cond = old["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "DisruptionAllowed"));
    let since = match old_cond {
        Some(c) if c["status"] == cond && c["reason"] == reason => c["lastTransitionTime"].clone(),
        _ => json!(now),
    };
    let mut out = json!({
        "observedGeneration": pdb.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
        "disruptionsAllowed": allowed,
        "currentHealthy": healthy,
        "desiredHealthy": desired,
        "expectedPods": expected,
        "conditions": [{
            "type": "DisruptionAllowed", "status": cond, "reason": reason, "message": "",
            "observedGeneration": pdb.pointer("/metadata/generation").cloned().unwrap_or(json!(1)),
            "lastTransitionTime": since
        }]
    });
    if let Some(d) = old.get("disruptedPods").filter(|d| d.is_object()) {
        out["disruptedPods"] = d.clone();
    }
    out
}

/// A pod with the condition Ready=True.
fn ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// An int-or-percent of `total` (`"50%"`), rounded up or down.
fn scaled(v: &Value, total: i64, round_up: bool) -> i64 {
    match v {
        Value::Number(n) => n.as_i64().unwrap_or(0),
        Value::String(s) => match s.strip_suffix('%').and_then(|p| p.parse::<i64>().ok()) {
            Some(pct) if round_up => (pct * total + 99) / 100,
            Some(pct) => pct * total / 100,
            None => s.parse().unwrap_or(0),
        },
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
