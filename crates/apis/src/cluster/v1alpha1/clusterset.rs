//! `ClusterSet` and `ClusterSetBinding`: who may place onto which clusters.
//!
//! A cluster belongs to the set its label [`CLUSTERSET_LABEL`] names ([`DEFAULT_CLUSTERSET`]
//! without it). A namespace's PropagationPolicies place only onto clusters of the sets bound in
//! that namespace: a `ClusterSetBinding` there, named after its set, and the sets marked
//! `spec.allNamespaces` (the hub's `--default-clusterset-binding`, on by default, marks the set
//! `default`). Creating a
//! binding needs `create` on the subresource `clustersets/bind` of the set, so an admin decides
//! which teams reach which clusters. Cluster-scoped policies are not limited by sets.

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The label that puts a Cluster in a ClusterSet.
pub const CLUSTERSET_LABEL: &str = "cluster.flotilla.io/clusterset";

/// The set of a Cluster without [`CLUSTERSET_LABEL`].
pub const DEFAULT_CLUSTERSET: &str = "default";

/// The set `labels` put a cluster in.
pub fn clusterset_of(labels: Option<&std::collections::BTreeMap<String, String>>) -> &str {
    labels
        .and_then(|l| l.get(CLUSTERSET_LABEL))
        .map(String::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(DEFAULT_CLUSTERSET)
}

/// A named set of member clusters, the clusters labelled `cluster.flotilla.io/clusterset=<name>`.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.flotilla.io",
    version = "v1alpha1",
    kind = "ClusterSet",
    category = "flotilla",
    derive = "PartialEq",
    doc = "ClusterSet names a set of member clusters: those labelled cluster.flotilla.io/clusterset=<name> (clusters without the label are in the set \"default\"). Bind it to a namespace with a ClusterSetBinding to let that namespace's policies place onto its clusters.",
    crates(kube_core = "::kube_core"),
    printcolumn = r#"{"name": "All-Namespaces", "type": "boolean", "jsonPath": ".spec.allNamespaces"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSetSpec {
    /// Bound in every namespace, with no ClusterSetBinding: what the hub's
    /// `--default-clusterset-binding` (on by default) sets on the set `default`, so a fresh
    /// hub's policies reach every cluster without a label.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_namespaces: bool,
}

/// The sets the policies of `namespace` may place onto: those `bindings` (ClusterSetBindings,
/// by namespace and set) bind there, and those `sets` bind in every namespace. Without a
/// ClusterSet named `default`, that set is bound everywhere (a hub that never wrote one, or
/// one deleted: only `allNamespaces: false` on it takes it away).
pub fn bound_sets<'a>(
    namespace: &str,
    bindings: impl IntoIterator<Item = &'a ClusterSetBinding>,
    sets: impl IntoIterator<Item = &'a ClusterSet>,
) -> std::collections::BTreeSet<String> {
    let mut out: std::collections::BTreeSet<String> = bindings
        .into_iter()
        .filter(|b| b.metadata.namespace.as_deref() == Some(namespace))
        .filter(|b| b.metadata.deletion_timestamp.is_none())
        .map(|b| b.spec.cluster_set.clone())
        .collect();
    let mut default_seen = false;
    for s in sets {
        let name = s.metadata.name.as_deref().unwrap_or_default();
        default_seen |= name == DEFAULT_CLUSTERSET;
        if s.spec.all_namespaces {
            out.insert(name.to_owned());
        }
    }
    if !default_seen {
        out.insert(DEFAULT_CLUSTERSET.to_owned());
    }
    out
}

/// Lets the policies of its namespace place onto the clusters of one ClusterSet. Named after
/// the set; creating one needs `create` on `clustersets/bind` of that set.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.flotilla.io",
    version = "v1alpha1",
    kind = "ClusterSetBinding",
    namespaced,
    category = "flotilla",
    derive = "PartialEq",
    doc = "ClusterSetBinding lets the PropagationPolicies of its namespace place onto the clusters of a ClusterSet. Its name must be the set's (spec.clusterSet); creating it needs the verb create on the subresource clustersets/bind of that set.",
    crates(kube_core = "::kube_core"),
    printcolumn = r#"{"name": "ClusterSet", "type": "string", "jsonPath": ".spec.clusterSet"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSetBindingSpec {
    /// The ClusterSet bound to this namespace; the binding's name must be the same.
    pub cluster_set: String,
}
