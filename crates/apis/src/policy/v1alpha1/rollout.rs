//! `spec.rolloutStrategy` of a propagation policy (a flotilla field beside Karmada's): how a
//! change of a propagated object reaches its clusters. `All` (the default) sends it everywhere
//! at once; `Progressive` and `ProgressivePerGroup` roll it out cluster by cluster, each step
//! waiting until the clusters of the last one are healthy on the new revision, with the knobs
//! of Open Cluster Management's rollout strategies.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ClusterAffinity;

/// How a change of a propagated object reaches its clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStrategy {
    /// `All` (default): every cluster gets a change at once. `Progressive`: the clusters of
    /// `groups` first, one group at a time, then the rest `maxConcurrency` at a time.
    /// `ProgressivePerGroup`: one group at a time (the clusters in no group last, as one
    /// group).
    #[serde(rename = "type", default)]
    pub type_: RolloutType,
    /// How many clusters, at most, take the new revision at once and have not yet been healthy
    /// for `minSuccessTime`: a number, or a percentage of the clusters (rounded up). Default:
    /// `Progressive` 25%, `ProgressivePerGroup` the whole group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::int_or_string")]
    pub max_concurrency: Option<IntOrString>,
    /// How long a cluster must be healthy on the new revision before it stops counting against
    /// `maxConcurrency` (and, per group, before the next group starts), a Go duration (`10s`,
    /// `5m`). Default `0s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_success_time: Option<String>,
    /// How long a cluster may take to become healthy on the new revision before it counts as
    /// failed (`TimeOut`), a Go duration. Default: no deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress_deadline: Option<String>,
    /// How many clusters may fail (`Failed`, `TimeOut`) before the rollout stops taking new
    /// clusters: a number, or a percentage of the clusters (rounded down). Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::int_or_string")]
    pub max_failures: Option<IntOrString>,
    /// Groups of clusters rolled out in this order, before the clusters in no group. A cluster
    /// in several groups belongs to the first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<RolloutGroup>,
    /// Holds the rollout: clusters not yet on the new revision stay where they are.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub paused: bool,
}

/// How a change reaches the clusters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum RolloutType {
    /// Every cluster at once.
    #[default]
    All,
    /// Groups first, then the rest by `maxConcurrency`.
    Progressive,
    /// One group at a time.
    ProgressivePerGroup,
}

/// A named group of clusters of a rollout.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RolloutGroup {
    /// The group's name, shown in the rollout's status.
    pub name: String,
    /// The clusters in the group (of those the object is placed in).
    pub cluster_affinity: ClusterAffinity,
}

impl RolloutStrategy {
    /// Whether changes go cluster by cluster (not `All`).
    pub fn progressive(&self) -> bool {
        self.type_ != RolloutType::All
    }
}
