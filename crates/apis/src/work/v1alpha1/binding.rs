//! `ResourceBinding` and `ClusterResourceBinding`: one per hub object a propagation policy
//! selects, holding what the scheduler decided for it (clusters and replica counts) and how
//! it fares in each of them.
//!
//! The detector creates a binding named `<template name>-<kind in lower case>` in the
//! template's namespace (a `ClusterResourceBinding` for cluster-scoped templates), owned by
//! the template, and copies the policy's placement into it; the scheduler writes `clusters`;
//! the binding controller renders one Work per cluster; status aggregation fills the status.
//! Field names follow Karmada's `work.karmada.io/v1alpha2`.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::policy::v1alpha1::{ConflictResolution, FailoverBehavior, Placement, RolloutStrategy};

/// Condition type (binding): the scheduler has placed the object.
pub const CONDITION_SCHEDULED: &str = "Scheduled";
/// Condition type (binding): the object is applied in every cluster it is scheduled to.
pub const CONDITION_FULLY_APPLIED: &str = "FullyApplied";

/// Reason of `Scheduled=True`.
pub const REASON_BINDING_SCHEDULED: &str = "Success";
/// Reason of `Scheduled=False`: no cluster passes the filters (affinity, tolerations, API
/// enablement, spread).
pub const REASON_NO_CLUSTER_FIT: &str = "NoClusterFit";
/// Reason of `Scheduled=False`: clusters pass the filters but cannot take the replicas.
pub const REASON_UNSCHEDULABLE: &str = "Unschedulable";
/// Reason of `Scheduled=False`: the scheduler failed (e.g. it could not read Clusters).
pub const REASON_SCHEDULER_ERROR: &str = "SchedulerError";
/// Reason of `FullyApplied=True`.
pub const REASON_FULLY_APPLIED: &str = "FullyAppliedSuccess";
/// Reason of `FullyApplied=False`.
pub const REASON_NOT_FULLY_APPLIED: &str = "FullyAppliedFailed";
/// Reason of `FullyApplied=False`: the binding names an object it may not propagate (another
/// namespace, a cluster-scoped object, the hub's own); it gets no Works (see
/// [`crate::scope`]).
pub const REASON_OUT_OF_SCOPE: &str = "OutOfScope";

/// One hub object to propagate and the scheduler's decision for it.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "work.flotilla.io",
    version = "v1alpha1",
    kind = "ResourceBinding",
    namespaced,
    shortname = "rb",
    status = "ResourceBindingStatus",
    category = "flotilla",
    derive = "PartialEq",
    doc = "ResourceBinding ties one namespaced object on the hub to the member clusters the scheduler chose for it, with per-cluster status. Named <template name>-<kind in lower case>, owned by the template.",
    crates(kube_core = "::kube_core"),
    // Columns as JSON: clippy takes repeated `printcolumn(type_ = ...)` for duplicated attributes.
    printcolumn = r#"{"name": "Scheduled", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Scheduled\")].status"}"#,
    printcolumn = r#"{"name": "FullyApplied", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"FullyApplied\")].status"}"#,
    printcolumn = r#"{"name": "Rollout", "type": "string", "jsonPath": ".status.rollout.conditions[?(@.type==\"Progressing\")].reason"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBindingSpec {
    /// The hub object (the template) this binding propagates.
    pub resource: ObjectReference,
    /// The template's dependencies (ConfigMaps, Secrets, ...) follow it to its clusters.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub propagate_deps: bool,
    /// What one replica of the template needs, for placing by free capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica_requirements: Option<ReplicaRequirements>,
    /// The template's replica count (0 for kinds without replicas).
    #[serde(default, skip_serializing_if = "crate::schema::is_zero")]
    pub replicas: i32,
    /// The scheduler's decision: the clusters and each one's replicas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<TargetCluster>,
    /// The placement, copied from the policy when the binding is created or the policy changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// Clusters the object is leaving (failover, rescheduling) whose copies are kept until the
    /// replacement is available or the grace period ends.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub graceful_eviction_tasks: Vec<GracefulEvictionTask>,
    /// The bindings of the workloads this object follows as a dependency (`propagateDeps`),
    /// and their clusters; the object goes where any of them goes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required_by: Vec<BindingSnapshot>,
    /// Copied from the policy; passed down to each Work's conflict policy.
    #[serde(default)]
    pub conflict_resolution: ConflictResolution,
    /// Copied from the policy: how the object moves when a cluster fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<FailoverBehavior>,
    /// flotilla addition: the policy that selected the template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy_ref: Option<PolicyReference>,
    /// flotilla addition, copied from the policy: how a change of the template reaches the
    /// clusters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_strategy: Option<RolloutStrategy>,
}

cluster_twin! {
    /// `ResourceBindingSpec` of a `ClusterResourceBinding`; it derefs to the shared
    /// [`ResourceBindingSpec`].
    #[kube(
        group = "work.flotilla.io",
        version = "v1alpha1",
        kind = "ClusterResourceBinding",
        shortname = "crb",
        status = "ResourceBindingStatus",
        category = "flotilla",
        derive = "PartialEq",
        doc = "ClusterResourceBinding ties one cluster-scoped object on the hub to the member clusters the scheduler chose for it, with per-cluster status.",
        crates(kube_core = "::kube_core"),
        printcolumn = r#"{"name": "Scheduled", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Scheduled\")].status"}"#,
        printcolumn = r#"{"name": "FullyApplied", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"FullyApplied\")].status"}"#,
        printcolumn = r#"{"name": "Rollout", "type": "string", "jsonPath": ".status.rollout.conditions[?(@.type==\"Progressing\")].reason"}"#,
        printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
    )]
    pub struct ClusterResourceBindingSpec { pub spec: ResourceBindingSpec }
}

/// Names one object on the hub.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ObjectReference {
    /// The object's apiVersion.
    pub api_version: String,
    /// The object's kind.
    pub kind: String,
    /// The object's namespace; absent for cluster-scoped objects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
    /// The object's uid, so a re-created object of the same name is told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The object's resourceVersion when the binding was last updated from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

impl ObjectReference {
    /// Whether it names a core `v1` Service (what multi-cluster services and the fleet's DNS
    /// are made of).
    pub fn is_service(&self) -> bool {
        self.api_version == "v1" && self.kind == "Service"
    }
}

/// What one replica needs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaRequirements {
    /// Resources one replica requests (the sum over its pod's containers), e.g. `cpu`, `memory`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub resource_request: BTreeMap<String, Quantity>,
    /// The namespace the replicas run in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The pods' priority class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority_class_name: Option<String>,
}

/// One cluster the scheduler chose.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetCluster {
    /// The Cluster's name.
    pub name: String,
    /// The replicas it runs (for Duplicated, the template's whole count).
    #[serde(default, skip_serializing_if = "crate::schema::is_zero")]
    pub replicas: i32,
}

/// A cluster the object is leaving, kept until it can go.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GracefulEvictionTask {
    /// The cluster being left.
    pub from_cluster: String,
    /// The replicas the object had there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    /// Why, in CamelCase (e.g. `TaintUntolerated`).
    #[schemars(length(min = 1, max = 32))]
    pub reason: String,
    /// Details for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The controller that started the eviction.
    pub producer: String,
    /// How long to wait for the replacement before removing the copy anyway; absent: the
    /// hub's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_period_seconds: Option<i32>,
    /// Keep the copy until this is set to false (e.g. for a manual check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suppress_deletion: Option<bool>,
    /// When the eviction started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub creation_timestamp: Option<Time>,
}

/// A binding an object depends on, with that binding's clusters.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BindingSnapshot {
    /// The binding's namespace; absent for a ClusterResourceBinding.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The binding's name.
    pub name: String,
    /// The binding's clusters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<TargetCluster>,
}

/// The policy that selected a binding's template.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PolicyReference {
    /// `PropagationPolicy` or `ClusterPropagationPolicy`.
    pub kind: String,
    /// The policy's namespace; absent for a ClusterPropagationPolicy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The policy's name.
    pub name: String,
    /// The policy's uid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// How the scheduling went and how the object fares in each cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceBindingStatus {
    /// The binding's `metadata.generation` the scheduler last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_observed_generation: Option<i64>,
    /// With `clusterAffinities`: the name of the group the current placement comes from.
    #[serde(
        default,
        rename = "schedulerObservingAffinityName",
        skip_serializing_if = "Option::is_none"
    )]
    pub scheduler_observed_affinity_name: Option<String>,
    /// When the scheduler last placed the object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scheduled_time: Option<Time>,
    /// `Scheduled` and `FullyApplied`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Vec<Condition>,
    /// The object's state in each cluster it is scheduled to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aggregated_status: Vec<AggregatedStatusItem>,
    /// flotilla addition: the clusters failover took the object out of. Failback returns it to
    /// one when the cluster has been Ready for the hub's `--failback-after` and the policy
    /// still places the object there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_over: Vec<FailedOverCluster>,
    /// flotilla addition: where a progressive rollout (`spec.rolloutStrategy`) stands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout: Option<super::RolloutStatus>,
}

/// A cluster failover took an object out of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailedOverCluster {
    /// The Cluster's name.
    pub name: String,
    /// When the object was taken out.
    pub since: Time,
}

/// The object's state in one member cluster.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AggregatedStatusItem {
    /// The Cluster's name.
    pub cluster_name: String,
    /// The object's `status` in the member, as it reported it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::schema::raw_object")]
    pub status: Option<Value>,
    /// Whether the object is applied in the member.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub applied: bool,
    /// Why it is not applied, when it is not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_message: Option<String>,
    /// Whether the object is healthy in the member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<ResourceHealth>,
}

/// Whether an object is healthy in a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ResourceHealth {
    /// Available as its kind defines it (e.g. every replica ready).
    Healthy,
    /// Present but not available.
    Unhealthy,
    /// Not known (no status yet, or a kind without a health rule).
    Unknown,
}

#[cfg(test)]
mod tests;
