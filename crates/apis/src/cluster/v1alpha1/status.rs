//! The status of a `Cluster`, reported by its agent (or push worker) and the health controller.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the hub knows of a member cluster now.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterStatus {
    /// `Joined` and `Ready`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Vec<Condition>,
    /// The member's Kubernetes version (gitVersion, e.g. v1.33.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kubernetes_version: Option<String>,
    /// The group-versions and resources the member serves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub api_enablements: Vec<ApiEnablement>,
    /// How many nodes the member has, and how many are ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_summary: Option<NodeSummary>,
    /// The member's resources: what its nodes offer and what is requested of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_summary: Option<ResourceSummary>,
    /// When the agent (or push worker) last reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_heartbeat_time: Option<Time>,
}

/// One group-version the member serves, with its resources.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiEnablement {
    /// `group/version`, or `version` for the core group (e.g. `apps/v1`, `v1`).
    pub group_version: String,
    /// The resources served at that group-version.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<ApiResource>,
}

/// A resource a member serves.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApiResource {
    /// The plural resource name (e.g. `deployments`).
    pub name: String,
    /// The kind (e.g. `Deployment`).
    pub kind: String,
}

/// Node counts of a member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeSummary {
    /// All nodes.
    #[serde(default)]
    pub total_num: i32,
    /// Nodes whose Ready condition is True.
    #[serde(default)]
    pub ready_num: i32,
}

/// Resources of a member, summed over its ready nodes (resource name → quantity, e.g. `cpu`,
/// `memory`, `pods`, `nvidia.com/gpu`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSummary {
    /// What the nodes offer to pods (the sum of node `status.allocatable`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocatable: BTreeMap<String, Quantity>,
    /// What running and pending pods request of it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub allocated: BTreeMap<String, Quantity>,
    /// How many more replicas of given requests fit, node by node; see [`ReplicaEstimate`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replica_estimates: Vec<ReplicaEstimate>,
}

/// How many more replicas with a given per-replica request the member can take now.
///
/// Summed totals overstate capacity (a replica cannot span nodes: 8 free CPUs over 8 nodes do
/// not fit one 2-CPU replica), so the reporter computes, over ready schedulable nodes,
/// `Σ_node min_resource ⌊free(node, resource) / request(resource)⌋` where `free = allocatable −
/// requested`. It reports one estimate per request shape it was asked about (the shapes the
/// scheduler sees most); a scheduler whose workload has no matching shape falls back to
/// `allocatable − allocated`, an upper bound.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaEstimate {
    /// The request of one replica (resource name → quantity), e.g. `{cpu: 500m, memory: 1Gi}`.
    pub request: BTreeMap<String, Quantity>,
    /// How many more such replicas fit.
    pub replicas: i64,
}
