//! The scheduling framework: filter → score → select → assign, for one binding at a time.
//!
//! [`schedule`] is a pure function of a [`Request`] (the binding's placement, kind, replicas and
//! current clusters) and the registered [`Cluster`]s; the scheduler controller does the I/O
//! around it, and `flotilla explain placement` prints its [`Decision::explanation`] with
//! [`crate::explain::render`]. Every cluster gets a [`ClusterVerdict`] saying what happened to
//! it and why, so an unexpected placement can be understood without reading logs.
//!
//! # Steps
//! 1. **Filter** ([`crate::filter`]): affinity, tolerations, API enablement, readiness; the
//!    first plugin that refuses a cluster gives its reason.
//! 2. **Score** ([`crate::score`]): 100 for a cluster the binding already uses (stability, so a
//!    cluster joining does not attract running workloads), minus 10 for each `PreferNoSchedule`
//!    taint no toleration covers. Scores only order clusters where a choice must be made
//!    (spread constraints); without spread constraints every feasible cluster is selected.
//! 3. **Select** ([`crate::select`]): `spreadConstraints` keep clusters within the group bounds.
//! 4. **Assign** ([`crate::assign`]): `Duplicated` or `Divided` replicas (static weights, dynamic
//!    weights, equal weights), with `clusterReplicaLimits` and the stability rules of
//!    [`crate::assign::apportion`].
//!
//! With `placement.clusterAffinities`, the groups are tried in order and the first one that
//! schedules without error wins ([`Decision::affinity_name`]); `clusterAffinity` is then ignored.
//!
//! # Determinism and cost
//! Clusters are considered in name order and every tie is broken by name, so the same input
//! always gives the same decision. A call costs O(n log n) in the number of clusters (plus the
//! size of each cluster's taints and API list), with O(n) allocation: it is meant to be called
//! thousands of times a second over a thousand clusters.

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::policy::v1alpha1::{ClusterAffinity, Placement};

use crate::assign::Assignment;
use crate::filter;
pub use crate::score::{score, SCORE_KEEP, SCORE_PREFER_NO_SCHEDULE};

/// One binding to place.
#[derive(Clone, Debug)]
pub struct Request<'a> {
    /// The placement copied from the policy into the binding.
    pub placement: &'a Placement,
    /// The template's (group, version, kind); group is empty for the core group.
    pub gvk: (&'a str, &'a str, &'a str),
    /// The template's replicas; `None` for kinds without replicas (ConfigMap, Service, …).
    pub replicas: Option<u32>,
    /// Per-replica resource requests in milli-units (see [`crate::quantity::millis`]), used by
    /// `dynamicWeight: AvailableReplicas`; may be empty.
    pub replica_request: BTreeMap<String, i64>,
    /// The binding's current clusters and their replicas, kept unless `rebalance`.
    pub current: Vec<(String, u32)>,
    /// Divide afresh instead of keeping the current placement.
    pub rebalance: bool,
    /// Eviction timing; `None`: a `NoExecute` taint evicts at once.
    pub eviction: Option<Eviction>,
    /// The ClusterSets the binding's namespace may place onto; `None`: every cluster (a
    /// cluster-scoped binding).
    pub cluster_sets: Option<&'a std::collections::BTreeSet<String>>,
}

/// When an untolerated `NoExecute` taint takes a workload off a cluster it runs in.
#[derive(Clone, Copy, Debug)]
pub struct Eviction {
    /// The time to judge taints' `timeAdded` against.
    pub now: k8s_openapi::jiff::Timestamp,
    /// How long a `NoExecute` taint no `clusterToleration` names is tolerated (the hub's
    /// `--failover-toleration`).
    pub default_toleration: std::time::Duration,
}

/// What the scheduler decided for one binding, and why.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// The chosen clusters in name order, with their replicas. Clusters that a `Divided`
    /// division gives 0 replicas are left out; for a kind without replicas every chosen
    /// cluster has `replicas: 0`, meaning "the whole object". Empty when `error` is set.
    pub clusters: Vec<Assignment>,
    /// One verdict per registered cluster, in name order.
    pub explanation: Vec<ClusterVerdict>,
    /// Why no placement could be made, for the binding's `Scheduled` condition.
    pub error: Option<String>,
    /// The `clusterAffinities` group that was used, if the placement has such groups.
    pub affinity_name: Option<String>,
}

/// What happened to one cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A filter plugin refused it.
    Filtered,
    /// It passed the filters but was not chosen (spread constraints, weight 0, or the
    /// decision failed as a whole).
    NotSelected,
    /// It was chosen.
    Selected,
}

/// One cluster's line in `flotilla explain placement`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterVerdict {
    /// The cluster's name.
    pub cluster: String,
    /// What happened to it.
    pub outcome: Outcome,
    /// Why it was filtered out or not selected (`None` when selected).
    pub filtered: Option<String>,
    /// Its score, if it passed the filters.
    pub score: Option<i64>,
    /// Replicas assigned, if selected and the kind has replicas.
    pub replicas: Option<u32>,
}

/// Places one binding over the registered clusters (owned, or shared as a reflector store
/// hands them out: `Arc<Cluster>`). See the module docs.
pub fn schedule<C: std::borrow::Borrow<Cluster>>(req: &Request<'_>, clusters: &[C]) -> Decision {
    let mut order: Vec<&Cluster> = clusters.iter().map(std::borrow::Borrow::borrow).collect();
    order.sort_by(|a, b| name(a).cmp(name(b)));
    let (group, version, _) = req.gvk;
    let group_version = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let current: HashMap<&str, u32> = req.current.iter().map(|(c, r)| (c.as_str(), *r)).collect();
    let ctx = Context {
        req,
        clusters: &order,
        group_version: &group_version,
        current: &current,
    };

    let p = req.placement;
    if p.cluster_affinities.is_empty() {
        return ctx.attempt(p.cluster_affinity.as_ref());
    }
    let mut failures = Vec::new();
    let last = p.cluster_affinities.len() - 1;
    for (i, term) in p.cluster_affinities.iter().enumerate() {
        let mut d = ctx.attempt(Some(&term.affinity));
        d.affinity_name = Some(term.affinity_name.clone());
        match d.error.take() {
            None => return d,
            Some(e) => {
                failures.push(format!("{}: {e}", term.affinity_name));
                if i == last {
                    d.error = Some(format!(
                        "no clusterAffinities group can be placed ({})",
                        failures.join("; ")
                    ));
                    return d;
                }
            }
        }
    }
    unreachable!("the loop returns at the last group, and there is at least one")
}

pub(crate) fn name(c: &Cluster) -> &str {
    c.metadata.name.as_deref().unwrap_or("")
}

/// What every attempt shares; clusters are in name order.
struct Context<'r, 'a> {
    req: &'r Request<'a>,
    clusters: &'r [&'r Cluster],
    group_version: &'r str,
    current: &'r HashMap<&'r str, u32>,
}

impl Context<'_, '_> {
    /// One full pass with one affinity (or none).
    fn attempt(&self, affinity: Option<&ClusterAffinity>) -> Decision {
        let p = self.req.placement;
        let mut verdicts: Vec<ClusterVerdict> = self
            .clusters
            .iter()
            .map(|c| {
                let refused = self.filter(affinity, c).err();
                let score = refused
                    .is_none()
                    .then(|| score(p, c, self.current.contains_key(name(c))));
                ClusterVerdict {
                    cluster: name(c).to_owned(),
                    outcome: if refused.is_some() {
                        Outcome::Filtered
                    } else {
                        Outcome::NotSelected
                    },
                    filtered: refused,
                    score,
                    replicas: None,
                }
            })
            .collect();
        let feasible: Vec<usize> = (0..verdicts.len())
            .filter(|&i| verdicts[i].outcome != Outcome::Filtered)
            .collect();
        let fail = |verdicts: Vec<ClusterVerdict>, error: String| Decision {
            clusters: Vec::new(),
            explanation: verdicts,
            error: Some(error),
            affinity_name: None,
        };
        if feasible.is_empty() {
            let error = format!(
                "no cluster passed the filters ({} registered; see each cluster's reason)",
                self.clusters.len()
            );
            return fail(verdicts, error);
        }
        let selected = match crate::select::select(
            &p.spread_constraints,
            self.clusters,
            &mut verdicts,
            feasible,
        ) {
            Ok(s) => s,
            Err(e) => return fail(verdicts, e),
        };
        match crate::assign::assign(
            self.req,
            self.clusters,
            &selected,
            self.current,
            &mut verdicts,
        ) {
            Ok(clusters) => Decision {
                clusters,
                explanation: verdicts,
                error: None,
                affinity_name: None,
            },
            Err(e) => fail(verdicts, e),
        }
    }

    fn filter(
        &self,
        affinity: Option<&ClusterAffinity>,
        c: &Cluster,
    ) -> Result<(), filter::Reason> {
        if let Some(sets) = self.req.cluster_sets {
            filter::cluster_set(sets, c)?;
        }
        if let Some(a) = affinity {
            filter::affinity(a, c)?;
        }
        if self.current.contains_key(name(c)) {
            // A cluster the binding runs in keeps it through NoSchedule taints and readiness
            // loss: only NoExecute taints (failover) take it away.
            filter::execution(
                &self.req.placement.cluster_tolerations,
                c,
                self.req.eviction,
            )?;
            return filter::api_enablement(self.group_version, self.req.gvk.2, c);
        }
        filter::tolerations(&self.req.placement.cluster_tolerations, c)?;
        filter::api_enablement(self.group_version, self.req.gvk.2, c)?;
        filter::ready(c)
    }
}
