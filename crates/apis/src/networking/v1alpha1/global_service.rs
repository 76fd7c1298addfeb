//! The `GlobalService` kind.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How the fleet name of the hub Service with the same name is answered. Without a
/// GlobalService the defaults apply: RoundRobin, TTL 30 s, a TCP check of the first port.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "networking.flotilla.io",
    version = "v1alpha1",
    kind = "GlobalService",
    namespaced,
    status = "GlobalServiceStatus",
    category = "flotilla",
    shortname = "gsvc",
    derive = "PartialEq",
    doc = "GlobalService tunes the fleet-wide DNS name of the Service with the same name and namespace: TTL, answer strategy and health check.",
    crates(kube_core = "::kube_core"),
    printcolumn = r#"{"name": "Strategy", "type": "string", "jsonPath": ".spec.strategy.type"}"#,
    printcolumn = r#"{"name": "Name", "type": "string", "jsonPath": ".status.names[0]"}"#,
    printcolumn = r#"{"name": "Healthy", "type": "integer", "jsonPath": ".status.healthyEndpoints"}"#,
    printcolumn = r#"{"name": "Endpoints", "type": "integer", "jsonPath": ".status.totalEndpoints"}"#,
    printcolumn = r#"{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct GlobalServiceSpec {
    /// The TTL of the answers in seconds (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0, max = 86400))]
    pub ttl_seconds: Option<u32>,
    /// Which endpoints an answer carries (default RoundRobin).
    #[serde(default)]
    pub strategy: GlobalServiceStrategy,
    /// How voters probe the endpoints (default: TCP to the Service's first port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health_check: Option<HealthCheck>,
}

/// The answer strategy.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalServiceStrategy {
    /// RoundRobin: every healthy endpoint, rotated. Failover: only `primaryRegion`'s while one
    /// of them is healthy. Geo: the nearest region to the client that has a healthy endpoint.
    /// Weighted: one target per answer, chosen in proportion to `weights`.
    #[serde(default, rename = "type")]
    pub type_: StrategyType,
    /// Failover: the region answered while one of its endpoints is healthy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary_region: Option<String>,
    /// Weighted: the share of answers each region or cluster gets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub weights: Vec<StrategyWeight>,
}

/// The kinds of answer strategy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum StrategyType {
    /// Every healthy endpoint, in rotated order.
    #[default]
    RoundRobin,
    /// The primary region's healthy endpoints; the others only when it has none.
    Failover,
    /// The nearest region to the client (by its address or EDNS Client Subnet).
    Geo,
    /// Targets answered in proportion to their weights.
    Weighted,
}

/// The weight of a region or a cluster (name exactly one).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct StrategyWeight {
    /// A region (`Cluster.spec.region`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// A cluster's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// Its relative weight.
    #[schemars(range(min = 0, max = 1000000))]
    pub weight: u32,
}

/// How an endpoint is probed by each voter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HealthCheck {
    /// TCP (a connection), HTTP or HTTPS (a GET answered 2xx or 3xx; HTTPS does not verify
    /// the certificate). Default TCP.
    #[serde(default)]
    pub protocol: ProbeProtocol,
    /// The port probed (default: the Service's first port).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<u16>,
    /// HTTP(S): the path (default `/`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Seconds between probes (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 3600))]
    pub interval_seconds: Option<u32>,
    /// Seconds a probe may take (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 600))]
    pub timeout_seconds: Option<u32>,
    /// Consecutive failures before a voter sees the endpoint down (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub failure_threshold: Option<u32>,
    /// Consecutive successes before a voter sees it up again (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 100))]
    pub success_threshold: Option<u32>,
}

impl HealthCheck {
    /// `intervalSeconds` or its default.
    pub fn interval(&self) -> u32 {
        self.interval_seconds.unwrap_or(10)
    }
    /// `timeoutSeconds` or its default.
    pub fn timeout(&self) -> u32 {
        self.timeout_seconds.unwrap_or(2)
    }
    /// `failureThreshold` or its default.
    pub fn failures(&self) -> u32 {
        self.failure_threshold.unwrap_or(2)
    }
    /// `successThreshold` or its default.
    pub fn successes(&self) -> u32 {
        self.success_threshold.unwrap_or(1)
    }
}

/// How an endpoint is probed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ProbeProtocol {
    /// A TCP connection that opens.
    #[default]
    #[serde(rename = "TCP")]
    Tcp,
    /// An HTTP GET answered 2xx or 3xx.
    #[serde(rename = "HTTP")]
    Http,
    /// An HTTPS GET answered 2xx or 3xx (certificate not verified).
    #[serde(rename = "HTTPS")]
    Https,
}

/// What is served for the Service and how each endpoint fares.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GlobalServiceStatus {
    /// The DNS names served for the Service (global, then per region and per cluster).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// How many endpoints are answered as healthy.
    #[serde(default)]
    pub healthy_endpoints: u32,
    /// How many endpoints there are.
    #[serde(default)]
    pub total_endpoints: u32,
    /// Every endpoint is down, so every one is answered (fail open).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fail_open: bool,
    /// Each member's load-balancer address with the voters' verdict.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<EndpointStatus>,
    /// `Serving` and `FailOpen`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(schema_with = "crate::schema::conditions")]
    pub conditions: Vec<Condition>,
}

/// One endpoint of the Service and the voters' verdict on it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EndpointStatus {
    /// The member cluster running it.
    pub cluster: String,
    /// That cluster's region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The load-balancer ingress address.
    pub address: String,
    /// Fresh voters that see it up.
    #[serde(default)]
    pub votes_up: u32,
    /// Fresh voters that see it down.
    #[serde(default)]
    pub votes_down: u32,
    /// Healthy, Unhealthy (a strict majority of fresh voters sees it down) or Unknown (no
    /// fresh vote yet; answered as healthy).
    pub verdict: EndpointVerdict,
}

/// The verdict on an endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum EndpointVerdict {
    /// Answered.
    Healthy,
    /// Left out of the answers (unless every endpoint is).
    Unhealthy,
    /// No fresh vote: answered.
    #[default]
    Unknown,
}
