//! The assign step: how many replicas each selected cluster runs.
//!
//! This module maps `placement.replicaScheduling` onto [`apportion`], the pure replica
//! arithmetic (Webster), which is also public here for the controllers that split Jobs and
//! HorizontalPodAutoscalers the same way.
//!
//! - No `replicaScheduling`, `Duplicated`, or a kind without replicas: every selected cluster
//!   gets the whole object (Karmada's default is `Duplicated` too).
//! - `Divided` with `weightPreference.staticWeightList`: a cluster's weight is that of the first
//!   entry whose `targetCluster` selects it; a cluster no entry selects weighs 0 and is not
//!   selected.
//! - `Divided` with `weightPreference.dynamicWeight: AvailableReplicas`: the weight is the
//!   cluster's free capacity in replicas of this workload ([`available_replicas`]).
//! - `Divided` otherwise (no weight preference, or `Aggregated`): equal weights.
//! - `clusterReplicaLimits`: the first entry that selects a cluster gives its min/max.
//!
//! The current placement is kept unless the request asks for rebalancing (see
//! [`apportion`]'s stability rules).

pub mod apportion;

use std::collections::{BTreeMap, HashMap};

use flotilla_apis::cluster::v1alpha1::{Cluster, ReplicaEstimate};
use flotilla_apis::policy::v1alpha1::{
    ClusterPreferences, ReplicaSchedulingType, StaticClusterWeight,
};

use crate::filter::selector::matches;
use crate::framework::{name, ClusterVerdict, Outcome, Request};
use crate::quantity::millis;
pub use apportion::{
    divide_dynamic, divide_dynamic_with, divide_hpa, divide_job, divide_static, divide_static_with,
    Assignment, HpaAssignment, JobAssignment, Options, Target,
};

/// Assigns replicas to the `selected` clusters (indices into `clusters`, name order) and
/// records them in `verdicts`; verdicts are only marked selected on success.
pub(crate) fn assign(
    req: &Request<'_>,
    clusters: &[&Cluster],
    selected: &[usize],
    current: &HashMap<&str, u32>,
    verdicts: &mut [ClusterVerdict],
) -> Result<Vec<Assignment>, String> {
    let strategy = req.placement.replica_scheduling.as_ref();
    let divided =
        strategy.is_some_and(|s| s.replica_scheduling_type == ReplicaSchedulingType::Divided);
    let total = match (divided, req.replicas) {
        (true, Some(total)) => total,
        _ => {
            for &i in selected {
                verdicts[i].outcome = Outcome::Selected;
                verdicts[i].replicas = req.replicas;
            }
            return Ok(selected
                .iter()
                .map(|&i| Assignment {
                    cluster: name(clusters[i]).to_owned(),
                    replicas: req.replicas.unwrap_or(0),
                })
                .collect());
        }
    };
    let strategy = strategy.expect("divided implies a strategy (checked just above)");
    let prefs = strategy.weight_preference.as_ref();
    let statics = prefs
        .map(|p| p.static_weight_list.as_slice())
        .unwrap_or_default();
    let dynamic = prefs.is_some_and(|p: &ClusterPreferences| p.dynamic_weight.is_some())
        && statics.is_empty();

    let mut targets: Vec<(usize, Target, i64)> = Vec::with_capacity(selected.len());
    let mut unweighted = Vec::new();
    for &i in selected {
        let c = clusters[i];
        let weight = if statics.is_empty() {
            1
        } else {
            static_weight(statics, c)
        };
        if weight == 0 {
            unweighted.push(i);
            continue;
        }
        let limit = strategy
            .cluster_replica_limits
            .iter()
            .find(|l| matches(&l.target_cluster, c));
        let bound = |v: Option<i32>| v.map(|v| u32::try_from(v).unwrap_or(0));
        let target = Target {
            cluster: name(c).to_owned(),
            weight,
            min: limit.and_then(|l| bound(l.min_replicas)),
            max: limit.and_then(|l| bound(l.max_replicas)),
            current: current.get(name(c)).copied().unwrap_or(0),
        };
        let free = if dynamic {
            available_replicas(c, &req.replica_request)
        } else {
            0
        };
        targets.push((i, target, free));
    }
    if targets.is_empty() {
        return Err(
            "no selected cluster is named by weightPreference.staticWeightList; add an entry \
             that selects one of them"
                .to_owned(),
        );
    }
    let opts = Options {
        rebalance: req.rebalance,
    };
    let assigned = if dynamic {
        let pairs: Vec<(Target, i64)> = targets.iter().map(|(_, t, f)| (t.clone(), *f)).collect();
        apportion::divide_dynamic_with(total, &pairs, opts)
    } else {
        let plain: Vec<Target> = targets.iter().map(|(_, t, _)| t.clone()).collect();
        apportion::divide_static_with(total, &plain, opts)
    }
    .map_err(|e| e.to_string())?;

    for i in unweighted {
        verdicts[i].filtered =
            Some("no weightPreference.staticWeightList entry selects it (weight 0)".to_owned());
    }
    for ((i, _, _), a) in targets.iter().zip(&assigned) {
        verdicts[*i].outcome = Outcome::Selected;
        verdicts[*i].replicas = Some(a.replicas);
    }
    Ok(assigned.into_iter().filter(|a| a.replicas > 0).collect())
}

fn static_weight(list: &[StaticClusterWeight], c: &Cluster) -> u32 {
    list.iter()
        .find(|w| matches(&w.target_cluster, c))
        .map_or(0, |w| u32::try_from(w.weight.max(0)).unwrap_or(u32::MAX))
}

/// How many more replicas of `request` (milli-units per resource) the cluster can take.
///
/// From `status.resourceSummary.replicaEstimates`: of the estimates whose request shape is at
/// least the workload's in every resource it asks for, the one giving the most replicas. A
/// shape at least as large as ours fits no more often than ours, so each such estimate is a
/// lower bound, and the largest lower bound is the tightest (it belongs to the smallest such
/// shape when estimates are consistent). With no such estimate: `allocatable − allocated`
/// divided by the request, the smallest quotient over the requested resources. Unknown (no
/// summary, empty request, a resource the cluster does not report) counts as 0, which
/// [`apportion::divide_dynamic`] handles by falling back to equal weights if all are 0.
pub fn available_replicas(c: &Cluster, request: &BTreeMap<String, i64>) -> i64 {
    let Some(summary) = c.status.as_ref().and_then(|s| s.resource_summary.as_ref()) else {
        return 0;
    };
    let covers = |e: &ReplicaEstimate| {
        request.iter().all(|(r, want)| {
            e.request
                .get(r)
                .and_then(millis)
                .is_some_and(|have| have >= *want)
        })
    };
    if let Some(best) = summary
        .replica_estimates
        .iter()
        .filter(|e| covers(e))
        .map(|e| e.replicas)
        .max()
    {
        return best.max(0);
    }
    let mut fit: Option<i64> = None;
    for (r, want) in request {
        if *want <= 0 {
            continue;
        }
        let Some(alloc) = summary.allocatable.get(r).and_then(millis) else {
            return 0;
        };
        let used = summary.allocated.get(r).and_then(millis).unwrap_or(0);
        let n = (alloc - used).max(0) / want;
        fit = Some(fit.map_or(n, |f| f.min(n)));
    }
    fit.unwrap_or(0)
}
