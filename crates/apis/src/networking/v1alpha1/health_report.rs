//! The `HealthReport` kind: one voter's probes of the fleet's service endpoints.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::ProbeProtocol;

/// The endpoints one voter probes (spec, written by the hub) and what it saw (status, written
/// by the voter). One per voter, named `endpoints`, in the voter's execution namespace.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "networking.flotilla.io",
    version = "v1alpha1",
    kind = "HealthReport",
    namespaced,
    status = "HealthReportStatus",
    category = "flotilla",
    derive = "PartialEq",
    doc = "HealthReport holds the endpoints one voter (a member's agent, or the hub for a push member) probes and its observations: its votes on their health.",
    crates(kube_core = "::kube_core"),
    printcolumn = r#"{"name": "Targets", "type": "integer", "jsonPath": ".status.targets"}"#,
    printcolumn = r#"{"name": "Down", "type": "integer", "jsonPath": ".status.down"}"#,
    printcolumn = r#"{"name": "Reported", "type": "date", "jsonPath": ".status.reportTime"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct HealthReportSpec {
    /// The endpoints to probe.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<ProbeTarget>,
}

/// One endpoint to probe.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeTarget {
    /// The hub Service's namespace.
    pub namespace: String,
    /// The hub Service's name.
    pub name: String,
    /// The member cluster the endpoint runs in.
    pub cluster: String,
    /// The address probed (a load-balancer ingress IP).
    pub address: String,
    /// The port probed.
    pub port: u16,
    /// TCP, HTTP or HTTPS.
    #[serde(default)]
    pub protocol: ProbeProtocol,
    /// HTTP(S): the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Seconds between probes.
    pub interval_seconds: u32,
    /// Seconds a probe may take.
    pub timeout_seconds: u32,
    /// Consecutive failures before the voter sees the endpoint down.
    pub failure_threshold: u32,
    /// Consecutive successes before the voter sees it up again.
    pub success_threshold: u32,
}

/// What the voter saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthReportStatus {
    /// When the voter last wrote the report (at least once per shortest interval): a report
    /// older than three intervals is stale and its votes do not count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report_time: Option<Time>,
    /// How many targets the voter probes.
    #[serde(default)]
    pub targets: u32,
    /// How many of them it sees down.
    #[serde(default)]
    pub down: u32,
    /// One vote per target probed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<ProbeResult>,
}

/// One voter's view of one endpoint, after its thresholds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeResult {
    /// The hub Service's namespace.
    pub namespace: String,
    /// The hub Service's name.
    pub name: String,
    /// The member cluster the endpoint runs in.
    pub cluster: String,
    /// The address probed.
    pub address: String,
    /// The port probed.
    pub port: u16,
    /// Whether the voter sees the endpoint up.
    pub up: bool,
    /// Since when it has seen it so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<Time>,
    /// The last failure, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}
