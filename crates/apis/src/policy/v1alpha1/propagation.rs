//! `PropagationPolicy` and `ClusterPropagationPolicy`: which hub objects go to which member
//! clusters. Both kinds share [`PropagationSpec`]; the cluster-scoped one may select objects
//! in any namespace and cluster-scoped objects, the namespaced one only objects in its own
//! namespace.

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::Placement;
use crate::work::v1alpha1::ConflictPolicy;

/// Which objects a policy propagates, and where.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policy.flotilla.io",
    version = "v1alpha1",
    kind = "PropagationPolicy",
    namespaced,
    shortname = "pp",
    category = "flotilla",
    derive = "PartialEq",
    doc = "PropagationPolicy selects objects in its namespace on the hub and says which member clusters they go to and how their replicas are shared.",
    crates(kube_core = "::kube_core"),
    // Columns as JSON: clippy takes repeated `printcolumn(type_ = ...)` for duplicated attributes.
    printcolumn = r#"{"name": "Conflict-Resolution", "type": "string", "jsonPath": ".spec.conflictResolution"}"#,
    printcolumn = r#"{"name": "Priority", "type": "integer", "jsonPath": ".spec.priority"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct PropagationSpec {
    /// The objects on the hub this policy propagates; an object matching any selector is
    /// selected.
    #[schemars(length(min = 1))]
    pub resource_selectors: Vec<ResourceSelector>,
    /// Also propagate what the selected workloads refer to (ConfigMaps, Secrets,
    /// ServiceAccounts, PersistentVolumeClaims of their pod templates) to the same clusters;
    /// they leave a cluster when the workload does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub propagate_deps: bool,
    /// Where the objects go and how their replicas are shared.
    #[serde(default)]
    pub placement: Placement,
    /// Decides between policies that select the same object: the higher wins, then the more
    /// specific selector (name over labels over kind), then the policy's name.
    #[serde(default)]
    pub priority: i32,
    /// What to do when an object already exists in a member cluster and flotilla did not
    /// create it: `Abort` (leave it, report the conflict), `Overwrite` (take it over, forcing
    /// flotilla's values), or `Adopt` (flotilla addition: take it over, keeping fields other
    /// managers own).
    #[serde(default)]
    pub conflict_resolution: ConflictResolution,
    /// Keep the member copies when the object is deleted on the hub (as the annotation
    /// `propagation.flotilla.io/orphan: "true"` on the object does).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub preserve_resources_on_deletion: bool,
    /// How the objects move when a cluster fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failover: Option<FailoverBehavior>,
    /// flotilla addition: how a change of the objects reaches their clusters (all at once, or
    /// progressively, gated on health).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_strategy: Option<super::RolloutStrategy>,
}

/// How objects move when something fails.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FailoverBehavior {
    /// When a cluster's `NoExecute` taint is no longer tolerated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterFailoverBehavior>,
}

/// Cluster failover: how the copy in the failed cluster goes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClusterFailoverBehavior {
    /// `Gracefully` (default): keep the copy until the replacement is ready or the hub's
    /// `--graceful-eviction-timeout` passes; `Directly`: remove it at once.
    #[serde(default)]
    pub purge_mode: PurgeMode,
}

/// How a failed cluster's copy is removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum PurgeMode {
    /// Once the replacement is ready (or a timeout passes).
    #[default]
    Gracefully,
    /// At once.
    Directly,
}

cluster_twin! {
    /// `PropagationSpec` of a `ClusterPropagationPolicy`; it derefs to the shared
    /// [`PropagationSpec`].
    #[kube(
        group = "policy.flotilla.io",
        version = "v1alpha1",
        kind = "ClusterPropagationPolicy",
        shortname = "cpp",
        category = "flotilla",
        derive = "PartialEq",
        doc = "ClusterPropagationPolicy selects objects in any namespace, or cluster-scoped objects, on the hub and says which member clusters they go to. A PropagationPolicy matching the same object wins over it.",
        crates(kube_core = "::kube_core"),
        printcolumn = r#"{"name": "Conflict-Resolution", "type": "string", "jsonPath": ".spec.conflictResolution"}"#,
        printcolumn = r#"{"name": "Priority", "type": "integer", "jsonPath": ".spec.priority"}"#,
        printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
    )]
    pub struct ClusterPropagationSpec { pub spec: PropagationSpec }
}

/// Selects objects on the hub by kind, and optionally namespace, name and labels; every part
/// that is set must match.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceSelector {
    /// The objects' apiVersion, e.g. `apps/v1`.
    pub api_version: String,
    /// The objects' kind, e.g. `Deployment`.
    pub kind: String,
    /// The objects' namespace. In a PropagationPolicy or OverridePolicy it is always the
    /// policy's own namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// One object by name; with `name` set, `labelSelector` is ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Objects whose labels match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<LabelSelector>,
}

/// What to do when an object to deliver already exists in a member cluster and flotilla did
/// not create it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ConflictResolution {
    /// Leave the member's object alone and report the conflict in the binding's status.
    #[default]
    Abort,
    /// Take the object over, forcing flotilla's values over other managers'.
    Overwrite,
    /// flotilla addition: take the object over, keeping the fields other managers own.
    Adopt,
}

// === impl ConflictResolution ===

impl From<ConflictResolution> for ConflictPolicy {
    fn from(c: ConflictResolution) -> Self {
        match c {
            ConflictResolution::Abort => ConflictPolicy::Abort,
            ConflictResolution::Overwrite => ConflictPolicy::Overwrite,
            ConflictResolution::Adopt => ConflictPolicy::Adopt,
        }
    }
}
