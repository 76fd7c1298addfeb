//! `OverridePolicy` and `ClusterOverridePolicy`: per-cluster changes to the objects a
//! propagation policy delivers. The binding controller applies every matching rule when it
//! renders an object for a cluster, before the object is written into that cluster's Work.

use std::collections::BTreeMap;

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{AnyJson, ClusterAffinity, ResourceSelector};

/// Which objects an override policy changes, and how, per cluster.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "policy.flotilla.io",
    version = "v1alpha1",
    kind = "OverridePolicy",
    namespaced,
    shortname = "op",
    category = "flotilla",
    derive = "PartialEq",
    doc = "OverridePolicy changes objects in its namespace for the member clusters its rules target (images, commands, labels, JSON patches) before they are delivered.",
    crates(kube_core = "::kube_core"),
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct OverrideSpec {
    /// The objects this policy changes; none means every object the policy may see.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resource_selectors: Vec<ResourceSelector>,
    /// The changes, each for a set of clusters, applied in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub override_rules: Vec<RuleWithCluster>,
}

cluster_twin! {
    /// `OverrideSpec` of a `ClusterOverridePolicy`; it derefs to the shared [`OverrideSpec`].
    #[kube(
        group = "policy.flotilla.io",
        version = "v1alpha1",
        kind = "ClusterOverridePolicy",
        shortname = "cop",
        category = "flotilla",
        derive = "PartialEq",
        doc = "ClusterOverridePolicy changes objects in any namespace, or cluster-scoped objects, for the member clusters its rules target. Its rules apply before those of OverridePolicies.",
        crates(kube_core = "::kube_core"),
        printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
    )]
    pub struct ClusterOverrideSpec { pub spec: OverrideSpec }
}

/// Changes for one set of clusters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RuleWithCluster {
    /// The clusters the changes are for; absent means every cluster.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_cluster: Option<ClusterAffinity>,
    /// The changes.
    pub overriders: Overriders,
}

/// The changes of one rule. Kinds of change apply in this order: image, command, args, labels,
/// annotations, then plaintext last (so a JSON patch can correct what the others wrote); within
/// a kind, in list order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Overriders {
    /// JSON-patch operations on the object.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plaintext: Vec<PlaintextOverrider>,
    /// Changes to container images.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_overrider: Vec<ImageOverrider>,
    /// Changes to a container's `command`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_overrider: Vec<CommandArgsOverrider>,
    /// Changes to a container's `args`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args_overrider: Vec<CommandArgsOverrider>,
    /// Changes to the object's labels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels_overrider: Vec<LabelAnnotationOverrider>,
    /// Changes to the object's annotations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub annotations_overrider: Vec<LabelAnnotationOverrider>,
}

/// How an overrider changes its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum OverriderOperator {
    /// Add the value (or set it when absent).
    Add,
    /// Remove the target.
    Remove,
    /// Replace the existing value.
    Replace,
}

/// How a command or args overrider changes a container's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CommandArgsOperator {
    /// Append the values to the list.
    Add,
    /// Remove every occurrence of the values from the list.
    Remove,
}

/// One JSON-patch operation (RFC 6902) on the object.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PlaintextOverrider {
    /// A JSON pointer into the object, e.g. `/spec/replicas`.
    pub path: String,
    /// The operation.
    pub operator: OverriderOperator,
    /// The value for `add` and `replace`: any JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<AnyJson>,
}

/// A change to one part of container images (`registry/repository:tag`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImageOverrider {
    /// Which image to change. Absent: every container and init container of a pod, or of
    /// a workload's pod template.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<ImagePredicate>,
    /// The part of the image to change.
    pub component: ImageComponent,
    /// The operation on that part.
    pub operator: OverriderOperator,
    /// The new part for `add` and `replace`, e.g. `registry.example.com` or `v2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// Selects the image an image overrider changes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImagePredicate {
    /// A JSON pointer to the image field, e.g. `/spec/template/spec/containers/0/image`.
    pub path: String,
}

/// A part of a container image reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ImageComponent {
    /// The registry host (and port), e.g. `docker.io`.
    Registry,
    /// The repository path, e.g. `library/nginx`.
    Repository,
    /// The tag, e.g. `1.27`.
    Tag,
}

/// A change to the `command` or `args` of one container.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandArgsOverrider {
    /// The container's name.
    pub container_name: String,
    /// The operation.
    pub operator: CommandArgsOperator,
    /// The values to add or remove.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub value: Vec<String>,
}

/// A change to the object's labels or annotations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LabelAnnotationOverrider {
    /// The operation, for each key of `value`.
    pub operator: OverriderOperator,
    /// The keys and values (values are ignored for `remove`).
    pub value: BTreeMap<String, String>,
}
