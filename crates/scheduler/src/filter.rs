//! Filter plugins: may this cluster run the workload at all?
//!
//! Each plugin is a plain function over one cluster returning `Ok(())` or a [`Reason`], a
//! sentence that `flotilla explain placement` prints beside the cluster, so it names the field
//! that disagreed and the value it saw. The framework runs them in a fixed order (affinity,
//! tolerations, API enablement, readiness) and keeps the first reason: the order puts what the
//! user wrote in the policy before what the cluster reports, because that is what they can change.
//!
//! Selector matching (label and field selectors) lives in [`selector`]; it is shared with the
//! assign step, where `staticWeightList` and `clusterReplicaLimits` pick clusters the same way.

pub(crate) mod selector;
#[cfg(test)]
mod tests;

use flotilla_apis::cluster::v1alpha1::{Cluster, Taint, TaintEffect, CONDITION_READY};
use flotilla_apis::policy::v1alpha1::ClusterAffinity;
use k8s_openapi::api::core::v1::Toleration;

/// Why a plugin turned a cluster down, in words for the user.
pub type Reason = String;

/// `placement.clusterAffinity` (or one `clusterAffinities` group): `clusterNames`, `exclude`,
/// `labelSelector` and `fieldSelector`, all of which must agree. An affinity with none of them
/// matches every cluster.
pub fn affinity(affinity: &ClusterAffinity, cluster: &Cluster) -> Result<(), Reason> {
    selector::affinity(affinity, cluster)
}

/// The cluster's ClusterSet (its `cluster.flotilla.io/clusterset` label, `default` without it)
/// must be one the binding's namespace has bound.
pub fn cluster_set(
    bound: &std::collections::BTreeSet<String>,
    cluster: &Cluster,
) -> Result<(), Reason> {
    let set = flotilla_apis::cluster::v1alpha1::clusterset_of(cluster.metadata.labels.as_ref());
    if bound.contains(set) {
        return Ok(());
    }
    Err(format!(
        "ClusterSet {set:?} is not bound to the namespace (create ClusterSetBinding {set:?} \
         there; it needs create on clustersets/bind)"
    ))
}

/// Cluster taints against `placement.clusterTolerations`. `NoSchedule` and `NoExecute` taints
/// must be tolerated; `PreferNoSchedule` never filters (see [`untolerated_preferences`]).
pub fn tolerations(tolerations: &[Toleration], cluster: &Cluster) -> Result<(), Reason> {
    for taint in &cluster.spec.taints {
        if taint.effect == TaintEffect::PreferNoSchedule {
            continue;
        }
        if !tolerations.iter().any(|t| tolerates(t, taint)) {
            return Err(format!(
                "taint {} is not tolerated (add a clusterToleration for it)",
                show_taint(taint)
            ));
        }
    }
    Ok(())
}

/// For a cluster the binding already runs in: every `NoExecute` taint must be tolerated,
/// for now. A toleration that names the taint tolerates it for its `tolerationSeconds` from the
/// taint's `timeAdded` (for ever without `tolerationSeconds`); a taint no toleration names is
/// tolerated for the eviction's default time. Without eviction timing a `NoExecute` taint no
/// toleration names evicts at once.
pub fn execution(
    tolerations: &[Toleration],
    cluster: &Cluster,
    eviction: Option<crate::framework::Eviction>,
) -> Result<(), Reason> {
    for taint in &cluster.spec.taints {
        if taint.effect != TaintEffect::NoExecute {
            continue;
        }
        let named = tolerations.iter().find(|t| tolerates(t, taint));
        let window = match (named, eviction) {
            (Some(t), _) => match t.toleration_seconds {
                None => continue,
                Some(s) => Some(std::time::Duration::from_secs(s.max(0).unsigned_abs())),
            },
            (None, Some(e)) => Some(e.default_toleration),
            (None, None) => None,
        };
        let still = match (window, eviction, &taint.time_added) {
            (Some(w), Some(e), Some(added)) => {
                let until = added.0.checked_add(w).unwrap_or(added.0);
                e.now < until
            }
            // No timing known: a named toleration with seconds, or a taint without time, is
            // honoured until the controller that set it says otherwise.
            (Some(_), _, _) => true,
            (None, _, _) => false,
        };
        if !still {
            return Err(format!(
                "taint {} is not tolerated any more: the workload moves away (failover)",
                show_taint(taint)
            ));
        }
    }
    Ok(())
}

/// When the first `NoExecute` toleration window on `cluster` ends, if one is running: the
/// scheduler looks again then.
pub fn next_eviction(
    tolerations: &[Toleration],
    cluster: &Cluster,
    eviction: crate::framework::Eviction,
) -> Option<k8s_openapi::jiff::Timestamp> {
    cluster
        .spec
        .taints
        .iter()
        .filter(|t| t.effect == TaintEffect::NoExecute)
        .filter_map(|taint| {
            let window = match tolerations.iter().find(|t| tolerates(t, taint)) {
                Some(t) => {
                    std::time::Duration::from_secs(t.toleration_seconds?.max(0).unsigned_abs())
                }
                None => eviction.default_toleration,
            };
            let until = taint.time_added.as_ref()?.0.checked_add(window).ok()?;
            (until > eviction.now).then_some(until)
        })
        .min()
}

/// How many `PreferNoSchedule` taints of the cluster no toleration covers; the score is
/// lowered for each.
pub fn untolerated_preferences(tolerations: &[Toleration], cluster: &Cluster) -> usize {
    cluster
        .spec
        .taints
        .iter()
        .filter(|taint| taint.effect == TaintEffect::PreferNoSchedule)
        .filter(|taint| !tolerations.iter().any(|t| tolerates(t, taint)))
        .count()
}

/// Kubernetes' `ToleratesTaint`: an empty effect matches every effect; an empty key matches
/// every key (meaningful with `Exists`); `Exists` ignores the value, `Equal` (or no operator)
/// compares it. An unknown operator tolerates nothing.
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != effect_name(taint.effect) {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("Equal") {
        "Exists" => true,
        "Equal" | "" => {
            toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
        _ => false,
    }
}

/// The cluster must list `kind` under `group_version` in `status.apiEnablements`.
/// `group_version` is `group/version`, or just `version` for the core group.
pub fn api_enablement(group_version: &str, kind: &str, cluster: &Cluster) -> Result<(), Reason> {
    let enablements = cluster
        .status
        .as_ref()
        .map(|s| s.api_enablements.as_slice())
        .unwrap_or_default();
    if enablements.is_empty() {
        return Err(format!(
            "API enablements not reported yet, so {kind} in {group_version} cannot be confirmed"
        ));
    }
    let served = enablements
        .iter()
        .filter(|e| e.group_version == group_version)
        .any(|e| e.resources.iter().any(|r| r.kind == kind));
    if served {
        Ok(())
    } else {
        Err(format!(
            "the cluster does not serve {kind} in {group_version}"
        ))
    }
}

/// The cluster's `Ready` condition must be `True`.
pub fn ready(cluster: &Cluster) -> Result<(), Reason> {
    let conditions = cluster
        .status
        .as_ref()
        .map(|s| s.conditions.as_slice())
        .unwrap_or_default();
    match flotilla_apis::conditions::find(conditions, CONDITION_READY) {
        Some(c) if c.status == "True" => Ok(()),
        Some(c) if c.reason.is_empty() => Err(format!("not ready (Ready is {})", c.status)),
        Some(c) => Err(format!("not ready (Ready is {}: {})", c.status, c.reason)),
        None => Err("not ready (no Ready condition reported yet)".to_owned()),
    }
}

fn effect_name(effect: TaintEffect) -> &'static str {
    match effect {
        TaintEffect::NoSchedule => "NoSchedule",
        TaintEffect::PreferNoSchedule => "PreferNoSchedule",
        TaintEffect::NoExecute => "NoExecute",
    }
}

fn show_taint(taint: &Taint) -> String {
    match &taint.value {
        Some(v) => format!("{}={}:{}", taint.key, v, effect_name(taint.effect)),
        None => format!("{}:{}", taint.key, effect_name(taint.effect)),
    }
}
