//! Which override rules apply to a cluster: `targetCluster` selection and the order of rules.
//!
//! Order: every `ClusterOverridePolicy` before every `OverridePolicy`, each group by policy
//! name, and within a policy its rules in list order. Later rules are applied later, so a
//! namespaced policy wins over a cluster-scoped one (as in Karmada, where the namespace's
//! owner has the last word), and among policies of one scope the name that sorts last wins.

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::policy::v1alpha1::{
    ClusterAffinity, ClusterOverridePolicy, OverridePolicy, Overriders, RuleWithCluster,
};

/// Whether a policy is cluster-scoped; cluster-scoped policies apply first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PolicyScope {
    /// A `ClusterOverridePolicy`.
    Cluster,
    /// An `OverridePolicy`.
    Namespaced,
}

/// An override policy already matched to the resource being rendered.
#[derive(Clone, Copy, Debug)]
pub struct MatchedPolicy<'a> {
    /// Its scope.
    pub scope: PolicyScope,
    /// Its name.
    pub name: &'a str,
    /// Its rules.
    pub rules: &'a [RuleWithCluster],
}

// === impl MatchedPolicy ===

impl<'a> From<&'a OverridePolicy> for MatchedPolicy<'a> {
    fn from(p: &'a OverridePolicy) -> Self {
        Self {
            scope: PolicyScope::Namespaced,
            name: p.metadata.name.as_deref().unwrap_or_default(),
            rules: &p.spec.override_rules,
        }
    }
}

impl<'a> From<&'a ClusterOverridePolicy> for MatchedPolicy<'a> {
    fn from(p: &'a ClusterOverridePolicy) -> Self {
        Self {
            scope: PolicyScope::Cluster,
            name: p.metadata.name.as_deref().unwrap_or_default(),
            rules: &p.spec.override_rules,
        }
    }
}

/// The overriders of every rule whose `targetCluster` selects `cluster`, in application order
/// (see the module docs).
pub fn rules_for_cluster<'a>(
    policies: &[MatchedPolicy<'a>],
    cluster: &Cluster,
) -> Vec<&'a Overriders> {
    let mut ordered: Vec<&MatchedPolicy<'a>> = policies.iter().collect();
    ordered.sort_by_key(|p| (p.scope, p.name));
    ordered
        .into_iter()
        .flat_map(|p| p.rules.iter())
        .filter(|r| {
            r.target_cluster
                .as_ref()
                .is_none_or(|a| affinity_selects(a, cluster))
        })
        .map(|r| &r.overriders)
        .collect()
}

/// Whether `affinity` selects `cluster`: every part that is set must match, and `exclude`
/// wins over everything. The scheduler's affinity filter decides, so overrides and placement
/// always agree on which clusters a term names.
pub fn affinity_selects(affinity: &ClusterAffinity, cluster: &Cluster) -> bool {
    flotilla_scheduler::filter::affinity(affinity, cluster).is_ok()
}
