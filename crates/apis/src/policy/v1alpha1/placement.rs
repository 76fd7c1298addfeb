//! `placement`: which member clusters a policy's objects may go to, and how their replicas
//! are shared among them. The scheduler reads it from the `ResourceBinding`, where the
//! detector copies it from the policy.

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, Toleration};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where the selected objects may run and how their replicas are divided.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    /// The clusters the objects may go to. Ignored when `clusterAffinities` is set; neither
    /// set means every cluster (subject to tolerations and spread).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_affinity: Option<ClusterAffinity>,
    /// Groups of clusters tried in order: the scheduler uses the first group that yields a
    /// placement, and falls back to the next when it cannot (e.g. a preferred region is out
    /// of capacity). Not to be combined with `clusterAffinity`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_affinities: Vec<ClusterAffinityTerm>,
    /// Taints of member clusters the objects tolerate. A `NoExecute` toleration's
    /// `tolerationSeconds` is how long the objects stay on a cluster after the taint appears
    /// (e.g. `cluster.flotilla.io/unreachable`) before they fail over.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_tolerations: Vec<Toleration>,
    /// How the chosen clusters spread over clusters, regions, zones or providers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub spread_constraints: Vec<SpreadConstraint>,
    /// How replicas are given to the chosen clusters. Absent: every chosen cluster gets the
    /// whole object (as `Duplicated`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_scheduling: Option<ReplicaSchedulingStrategy>,
}

/// A set of member clusters, by name, labels or topology fields. Every part that is set must
/// match; `exclude` removes clusters whatever else matches.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAffinity {
    /// Clusters whose labels match this selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
    /// Clusters whose topology fields match (keys `provider`, `region`, `zone`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<FieldSelector>,
    /// Clusters with one of these names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_names: Vec<String>,
    /// Clusters never chosen, whatever else matches.
    #[serde(default, rename = "exclude", skip_serializing_if = "Vec::is_empty")]
    pub exclude_clusters: Vec<String>,
}

/// Matches on a Cluster's topology fields (`spec.provider`, `spec.region`, `spec.zone`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FieldSelector {
    /// Requirements that must all hold; `key` is `provider`, `region` or `zone`, `operator`
    /// is `In`, `NotIn`, `Exists` or `DoesNotExist`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub match_expressions: Vec<NodeSelectorRequirement>,
}

/// One named group of clusters in an ordered `clusterAffinities` list.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterAffinityTerm {
    /// The group's name, unique in the list; the binding's status says which group the
    /// scheduler is using.
    #[schemars(length(min = 1, max = 32))]
    pub affinity_name: String,
    /// The clusters of this group.
    #[serde(flatten)]
    pub affinity: ClusterAffinity,
}

/// What to spread the chosen clusters over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SpreadField {
    /// Each cluster is its own group.
    Cluster,
    /// Clusters are grouped by `spec.region`.
    Region,
    /// Clusters are grouped by `spec.zone`.
    Zone,
    /// Clusters are grouped by `spec.provider`.
    Provider,
}

/// Bounds on how many groups (clusters, regions, zones, providers) are chosen.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpreadConstraint {
    /// Group by this topology field. Set this or `spreadByLabel`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_by_field: Option<SpreadField>,
    /// Group by the value of this Cluster label. Set this or `spreadByField`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread_by_label: Option<String>,
    /// At most this many groups are chosen (0: no bound).
    #[serde(default, skip_serializing_if = "crate::schema::is_zero")]
    #[schemars(range(min = 0))]
    pub max_groups: i32,
    /// At least this many groups are chosen, or the object is not scheduled (0: no bound).
    #[serde(default, skip_serializing_if = "crate::schema::is_zero")]
    #[schemars(range(min = 0))]
    pub min_groups: i32,
}

/// How replicas of a workload are given to the chosen clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSchedulingStrategy {
    /// `Duplicated`: every chosen cluster runs the whole replica count. `Divided`: the
    /// replica count is shared among the chosen clusters.
    #[serde(default)]
    pub replica_scheduling_type: ReplicaSchedulingType,
    /// For `Divided`: `Aggregated` packs replicas into as few clusters as their free capacity
    /// allows; `Weighted` shares them by `weightPreference`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_division_preference: Option<ReplicaDivisionPreference>,
    /// For `Divided` + `Weighted`: the weights. Absent: every chosen cluster weighs the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight_preference: Option<ClusterPreferences>,
    /// flotilla addition: per-cluster bounds on the replicas a `Divided` workload gets. For
    /// each chosen cluster the first entry whose `targetCluster` matches applies; replicas a
    /// `maxReplicas` cap takes away go to the other clusters by the same weights, and
    /// `minReplicas` is given first (as far as the total allows) before the rest is shared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cluster_replica_limits: Vec<ClusterReplicaLimit>,
}

/// Whether replicas are copied to every cluster or shared among them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ReplicaSchedulingType {
    /// Every chosen cluster runs the whole replica count.
    Duplicated,
    /// The replica count is shared among the chosen clusters.
    #[default]
    Divided,
}

/// How a `Divided` replica count is shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ReplicaDivisionPreference {
    /// As few clusters as the members' free capacity allows.
    Aggregated,
    /// By weight (`weightPreference`), apportioned with Webster's method.
    Weighted,
}

/// The weights of clusters for a `Weighted` division: static, or from free capacity.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterPreferences {
    /// Fixed weights; a chosen cluster no entry matches gets no replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub static_weight_list: Vec<StaticClusterWeight>,
    /// Weights taken from the members' status instead of a fixed list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_weight: Option<DynamicWeightFactor>,
}

/// A fixed weight for the clusters a target matches.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StaticClusterWeight {
    /// The clusters this weight is for.
    pub target_cluster: ClusterAffinity,
    /// The weight (at least 1), relative to the other entries.
    #[schemars(range(min = 1))]
    pub weight: i64,
}

/// Where dynamic weights come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum DynamicWeightFactor {
    /// The replicas each member can still run, estimated from its Cluster status.
    AvailableReplicas,
}

/// flotilla addition: bounds on the replicas one set of clusters gets in a `Divided` placement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterReplicaLimit {
    /// The clusters these bounds are for.
    pub target_cluster: ClusterAffinity,
    /// Each matching chosen cluster gets at least this many replicas, as far as the total
    /// replica count allows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub min_replicas: Option<i32>,
    /// Each matching cluster gets at most this many replicas.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub max_replicas: Option<i32>,
}
