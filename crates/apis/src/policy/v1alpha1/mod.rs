//! `policy.flotilla.io/v1alpha1`: propagation and override policies.
//!
//! - `PropagationPolicy` (namespaced) and `ClusterPropagationPolicy` (cluster-scoped) select
//!   objects on the hub and say where they go: which clusters, how replicas are shared, what
//!   follows them, and what happens on a conflict in the member.
//! - `OverridePolicy` and `ClusterOverridePolicy` change the selected objects per member
//!   cluster (images, commands, labels, JSON patches) before they are delivered.
//!
//! Field names and nesting follow Karmada's `policy.karmada.io/v1alpha1`, so a Karmada
//! manifest works with only the group of its `apiVersion` changed. flotilla's additions sit
//! beside Karmada's fields (never instead of them): `conflictResolution: Adopt` and
//! `placement.replicaScheduling.clusterReplicaLimits`, `rolloutStrategy`. Karmada fields flotilla does not act
//! on are not in the schema, so `kubectl apply` refuses them (strict field validation, its
//! default) instead of storing fields nothing acts on.

mod override_policy;
mod placement;
mod propagation;
mod rollout;
#[cfg(test)]
mod tests;

pub use override_policy::*;
pub use placement::*;
pub use propagation::*;
pub use rollout::*;

/// API group.
pub const GROUP: &str = "policy.flotilla.io";
/// API version.
pub const VERSION: &str = "v1alpha1";

/// `spreadByField` / `fieldSelector` key: the cluster itself (its name).
pub const FIELD_CLUSTER: &str = "cluster";
/// `spreadByField` / `fieldSelector` key: the Cluster's `spec.region`.
pub const FIELD_REGION: &str = "region";
/// `spreadByField` / `fieldSelector` key: the Cluster's `spec.zone`.
pub const FIELD_ZONE: &str = "zone";
/// `spreadByField` / `fieldSelector` key: the Cluster's `spec.provider`.
pub const FIELD_PROVIDER: &str = "provider";

/// Any JSON value kept as written: the schema is only `x-kubernetes-preserve-unknown-fields`
/// (no `type`), as for `apiextensions.k8s.io/v1 JSON`, so strings, numbers, lists and objects
/// all pass and nothing inside is pruned.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct AnyJson(pub serde_json::Value);

impl schemars::JsonSchema for AnyJson {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "AnyJson".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "x-kubernetes-preserve-unknown-fields": true })
    }
}
