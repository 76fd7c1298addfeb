//! The `Cluster` kind and its spec.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ClusterStatus;

/// How flotilla reaches a member cluster, and where it is.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "cluster.flotilla.io",
    version = "v1alpha1",
    kind = "Cluster",
    status = "ClusterStatus",
    category = "flotilla",
    derive = "PartialEq",
    doc = "Cluster is a member cluster registered with the hub. Works for it live in the namespace flotilla-es-<name>.",
    crates(kube_core = "::kube_core"),
    // Columns as JSON: clippy takes repeated `printcolumn(type_ = ...)` for duplicated attributes.
    printcolumn = r#"{"name": "Mode", "type": "string", "jsonPath": ".spec.syncMode"}"#,
    printcolumn = r#"{"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name": "Version", "type": "string", "jsonPath": ".status.kubernetesVersion"}"#,
    printcolumn = r#"{"name": "Region", "type": "string", "jsonPath": ".spec.region"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ClusterSpec {
    /// How Works reach the member: Pull (an agent inside the member dials out to the hub; the
    /// default) or Push (a worker in the hub dials in with the credentials in secretRef).
    #[serde(default)]
    pub sync_mode: SyncMode,
    /// The member's Kubernetes API endpoint (https://host:port). Required for Push; informative for Pull.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_endpoint: Option<String>,
    /// Push only: the Secret in the hub holding the credentials to reach the member (keys
    /// `kubeconfig`, or `token` and `caBundle`). The Cluster never holds credentials itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretRef>,
    /// The region the member runs in, for placement by topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The zone the member runs in, for placement by topology.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone: Option<String>,
    /// The cloud provider (or "on-prem") of the member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Taints keep workloads that do not tolerate them off the member (NoSchedule,
    /// PreferNoSchedule) or move them away (NoExecute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taints: Vec<Taint>,
    /// The networks (CIDRs) the member's own DNS queries come from: a query from one of them
    /// is answered with this member's endpoint of a fleet Service first (local-first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub networks: Vec<String>,
}

/// How Works are delivered to a member.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum SyncMode {
    /// A worker in the hub applies Works to the member with the credentials in `secretRef`.
    Push,
    /// An agent in the member watches its execution namespace and applies Works (outbound
    /// connections only).
    #[default]
    Pull,
}

/// A reference to a Secret in the hub.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SecretRef {
    /// The Secret's namespace (normally flotilla-system).
    pub namespace: String,
    /// The Secret's name.
    pub name: String,
}

/// A taint on a member cluster, as a node taint is on a node.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Taint {
    /// The taint key.
    pub key: String,
    /// The taint value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The effect on workloads that do not tolerate the taint.
    pub effect: TaintEffect,
    /// When the taint was added (set by flotilla for the taints it manages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_added: Option<Time>,
}

/// What a taint does to workloads that do not tolerate it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum TaintEffect {
    /// New placements avoid the cluster.
    #[default]
    NoSchedule,
    /// New placements avoid the cluster when another fits.
    PreferNoSchedule,
    /// Placements on the cluster are moved away, and new ones avoid it.
    NoExecute,
}

impl Cluster {
    /// Drops the member's API list and resource summary from the status: most of a Cluster's
    /// bytes, which a controller that only reads conditions, labels and spec need not keep for
    /// every member.
    pub fn forget_inventory(&mut self) {
        if let Some(status) = self.status.as_mut() {
            status.api_enablements = Vec::new();
            status.resource_summary = None;
        }
    }
}
