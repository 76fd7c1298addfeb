//! `multicluster.x-k8s.io/v1alpha1`: the Multi-Cluster Services API (KEP-1645).
//!
//! A `ServiceExport` in a hub namespace exports the Service of the same name from every member
//! that runs it; flotilla builds the `ServiceImport` from the members' EndpointSlices and
//! delivers both to the members of the namespace, and its DNS answers
//! `<svc>.<ns>.svc.clusterset.local`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Exports the Service of the same name and namespace to the cluster set.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "multicluster.x-k8s.io",
    version = "v1alpha1",
    kind = "ServiceExport",
    namespaced,
    status = "ServiceExportStatus",
    shortname = "svcex",
    derive = "PartialEq",
    doc = "ServiceExport declares that the Service with the same name and namespace is exported to the cluster set.",
    crates(kube_core = "::kube_core"),
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
pub struct ServiceExportSpec {}

/// The export's state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceExportStatus {
    /// `Valid` and `Conflict`, as KEP-1645 defines them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Vec<Condition>,
}

/// A Service of the cluster set, as the members consume it.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "multicluster.x-k8s.io",
    version = "v1alpha1",
    kind = "ServiceImport",
    namespaced,
    status = "ServiceImportStatus",
    shortname = "svcim",
    derive = "PartialEq",
    doc = "ServiceImport describes a Service exported from clusters of the cluster set.",
    crates(kube_core = "::kube_core"),
    printcolumn = r#"{"name": "Type", "type": "string", "jsonPath": ".spec.type"}"#,
    printcolumn = r#"{"name": "IP", "type": "string", "jsonPath": ".spec.ips"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ServiceImportSpec {
    /// The ports of the exported Service.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<ServicePort>,
    /// The cluster-set IPs (ClusterSetIP type).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ips: Vec<String>,
    /// `ClusterSetIP` or `Headless`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `None` or `ClientIP`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_affinity: Option<String>,
}

/// A port of an imported Service.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    /// The port's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// TCP, UDP or SCTP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// The application protocol.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_protocol: Option<String>,
    /// The port number.
    pub port: i32,
}

/// Which clusters export the Service.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ServiceImportStatus {
    /// The exporting clusters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<ClusterStatus>,
}

/// An exporting cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ClusterStatus {
    /// The cluster's name.
    pub cluster: String,
}

/// Label of an EndpointSlice copied from a member: the cluster it comes from (KEP-1645).
pub const SOURCE_CLUSTER_LABEL: &str = "multicluster.kubernetes.io/source-cluster";
/// Label of an EndpointSlice of an exported Service: the Service's (and ServiceImport's) name.
pub const SERVICE_NAME_LABEL: &str = "multicluster.kubernetes.io/service-name";
/// Label of flotilla's export requests and EndpointSlice copies: the exported Service's
/// namespace (they live in an execution namespace, not the Service's own).
pub const SERVICE_NAMESPACE_LABEL: &str = "multicluster.flotilla.io/service-namespace";
/// The EndpointSlice label naming the slice's writer.
pub const MANAGED_BY_LABEL: &str = "endpointslice.kubernetes.io/managed-by";
/// [`MANAGED_BY_LABEL`] of the EndpointSlice copies flotilla writes (on the hub and members).
pub const MANAGED_BY: &str = "mcs.flotilla.io";
/// ServiceExport condition: the export names a Service that can be exported.
pub const CONDITION_VALID: &str = "Valid";
/// ServiceExport condition: the exporting clusters disagree on the Service's shape.
pub const CONDITION_CONFLICT: &str = "Conflict";
/// The DNS domain of cluster-set Services: `<svc>.<ns>.svc.clusterset.local`.
pub const CLUSTERSET_DOMAIN: &str = "svc.clusterset.local";

/// The export request (a ServiceExport copy in a member's execution namespace) for the
/// Service `name` of namespace `namespace`: `<namespace>.<name>` (namespaces have no dots, so
/// requests of different namespaces never share a name).
pub fn export_request_name(namespace: &str, name: &str) -> String {
    format!("{namespace}.{name}")
}
