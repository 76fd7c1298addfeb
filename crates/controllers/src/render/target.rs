//! Which override rules apply to a cluster: `targetCluster` selection and the order of rules.
//!
//! Order: every `ClusterOverridePolicy` before every `OverridePolicy`, each group by policy
//! name, and within a policy its rules in list order. Later rules are applied later, so a
//! namespaced policy wins over a cluster-scoped one (as in Karmada, where the namespace's
//! owner has the last word), and among policies of one scope the name that sorts last wins.

use std::collections::BTreeMap;

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::policy::v1alpha1::{
    ClusterAffinity, ClusterOverridePolicy, FieldSelector, OverridePolicy, Overriders,
    RuleWithCluster, FIELD_PROVIDER, FIELD_REGION, FIELD_ZONE,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

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
/// wins over everything.
pub fn affinity_selects(affinity: &ClusterAffinity, cluster: &Cluster) -> bool {
    let name = cluster.metadata.name.as_deref().unwrap_or_default();
    let empty = BTreeMap::new();
    let labels = cluster.metadata.labels.as_ref().unwrap_or(&empty);
    !affinity.exclude_clusters.iter().any(|n| n == name)
        && (affinity.cluster_names.is_empty() || affinity.cluster_names.iter().any(|n| n == name))
        && affinity
            .label_selector
            .as_ref()
            .is_none_or(|s| label_selector_matches(s, labels))
        && affinity
            .field_selector
            .as_ref()
            .is_none_or(|s| field_selector_matches(s, cluster))
}

/// A Kubernetes label selector: `matchLabels` and `matchExpressions` (`In`, `NotIn`, `Exists`,
/// `DoesNotExist`) must all hold; an unknown operator matches nothing.
pub fn label_selector_matches(selector: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let by_labels = selector
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    by_labels
        && selector.match_expressions.iter().flatten().all(|e| {
            requirement_holds(
                &e.operator,
                labels.get(&e.key),
                e.values.as_deref().unwrap_or_default(),
            )
        })
}

fn field_selector_matches(selector: &FieldSelector, cluster: &Cluster) -> bool {
    selector.match_expressions.iter().all(|e| {
        let field = match e.key.as_str() {
            FIELD_PROVIDER => cluster.spec.provider.as_ref(),
            FIELD_REGION => cluster.spec.region.as_ref(),
            FIELD_ZONE => cluster.spec.zone.as_ref(),
            _ => return false,
        };
        requirement_holds(&e.operator, field, e.values.as_deref().unwrap_or_default())
    })
}

/// One requirement, with Kubernetes' semantics (an absent key satisfies `NotIn`).
fn requirement_holds(operator: &str, value: Option<&String>, values: &[String]) -> bool {
    match operator {
        "In" => value.is_some_and(|v| values.contains(v)),
        "NotIn" => !value.is_some_and(|v| values.contains(v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        _ => false,
    }
}
