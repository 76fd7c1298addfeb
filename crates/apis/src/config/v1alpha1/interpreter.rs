//! `ResourceInterpreter`: what Karmada's `ResourceInterpreterCustomization` does with Lua, in
//! CEL, the expression language Kubernetes itself uses for CRD validation and admission
//! policies. One interpreter per target kind; every rule is optional, and a kind without an
//! interpreter (or a rule left out) keeps flotilla's compiled behaviour (built-in kinds) or
//! none (custom kinds: one replica-less object, healthy once applied, status not collected).
//!
//! Every expression sees the object as `self` (the hub's template for `replicas` and
//! `dependencies`, the member's copy for `health` and `status`).

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Teaches the hub one kind: its replicas, health, status and dependencies, as CEL rules.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "config.flotilla.io",
    version = "v1alpha1",
    kind = "ResourceInterpreter",
    category = "flotilla",
    derive = "PartialEq",
    doc = "ResourceInterpreter tells the hub, with CEL rules, how to read one kind it has no compiled knowledge of (or to read a built-in kind differently): its replicas and per-replica requests (for Divided scheduling), where a divided count is written, when a member's copy is healthy, which status fields come back and how they add up on the hub, which objects follow it to its clusters, and which fields the member owns. Every rule sees the object as `self`.",
    crates(kube_core = "::kube_core"),
    printcolumn = r#"{"name": "Target-API", "type": "string", "jsonPath": ".spec.target.apiVersion"}"#,
    printcolumn = r#"{"name": "Target-Kind", "type": "string", "jsonPath": ".spec.target.kind"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInterpreterSpec {
    /// The kind this interpreter describes. At most one interpreter per apiVersion and kind
    /// is used: the oldest (then the first by name).
    pub target: InterpretedKind,
    /// How many replicas an object asks for, and what each needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<ReplicasRule>,
    /// Where the count a cluster is given out of a Divided placement is written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revise_replicas: Option<ReviseReplicasRule>,
    /// When a member's copy is healthy (gates progressive rollouts and failover).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<HealthRule>,
    /// Which status fields come back from each member and how they add up on the hub.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StatusRule>,
    /// Which other objects follow this one to its clusters (as `propagateDeps` does for
    /// the ConfigMaps and Secrets a Deployment mounts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<DependenciesRule>,
    /// Fields the member cluster owns: flotilla never overwrites them there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retain: Option<RetainRule>,
}

/// The kind an interpreter describes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InterpretedKind {
    /// `group/version` (or `v1` for the core group), e.g. `argoproj.io/v1alpha1`.
    pub api_version: String,
    /// The kind, e.g. `Rollout`.
    pub kind: String,
}

/// Replicas of an object.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReplicasRule {
    /// CEL returning the replica count (an int), e.g. `self.spec.replicas`.
    pub count: String,
    /// CEL returning what one replica requests, a map of resource name to quantity, e.g.
    /// `self.spec.template.spec.containers[0].resources.requests`. Without it replicas
    /// request nothing (every cluster fits any number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<String>,
}

/// Where a divided replica count is written in a cluster's copy.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviseReplicasRule {
    /// A dotted field path, e.g. `spec.replicas`; missing objects on the way are created.
    pub path: String,
}

/// Health of a member's copy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthRule {
    /// CEL returning true when the copy is healthy, e.g.
    /// `has(self.status.readyReplicas) && self.status.readyReplicas == self.spec.replicas`.
    pub healthy: String,
    /// CEL returning a string saying why it is not (read only when `healthy` is false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Status fields collected from the members.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusRule {
    /// The fields, each written under the same path of the hub object's `status`.
    pub fields: Vec<StatusField>,
}

/// One status field collected from every member and combined on the hub.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusField {
    /// Where the combined value goes under the hub object's `status`, a dotted path
    /// (e.g. `readyReplicas`, `rollout.updated`).
    pub name: String,
    /// CEL reading the value from a member's copy. Without it, `self.status.<name>`;
    /// a member whose copy lacks it (or whose rule yields null) is left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
    /// How the members' values combine.
    pub aggregate: Aggregate,
}

/// How members' values of one status field combine on the hub.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Aggregate {
    /// The sum of numbers (replica counts).
    #[default]
    Sum,
    /// The largest number (or the last string, as RFC 3339 times sort: `lastScheduleTime`).
    Max,
    /// The smallest number (or the first string).
    Min,
    /// Every distinct item of the members' lists (or every distinct value), in member order.
    Union,
    /// Conditions by type: one per type, `True` only where every member says `True`, its
    /// message naming the members that do not.
    Conditions,
}

/// Objects that follow the workload.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DependenciesRule {
    /// CEL returning a list of maps `{apiVersion, kind, name}` (and `namespace`, else the
    /// object's own), e.g.
    /// `self.spec.template.spec.volumes.filter(v, has(v.configMap)).map(v, {"apiVersion": "v1", "kind": "ConfigMap", "name": v.configMap.name})`.
    pub expression: String,
}

/// Fields the member cluster owns.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RetainRule {
    /// Dotted field paths (e.g. `spec.paused`): the member's value is kept when flotilla
    /// updates its copy.
    pub paths: Vec<String>,
}
