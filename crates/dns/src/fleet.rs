//! The input model: what the DNS server knows about the fleet.
//!
//! Filled by the hub's DNS controller from its watches, or read from a static JSON file (the types are
//! serde, camelCase). It holds verdicts already decided (see [`crate::verdict`]), never raw votes.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

/// TTL of answers, in seconds, when a service does not say.
pub const DEFAULT_TTL: u32 = 30;

fn default_ttl() -> u32 {
    DEFAULT_TTL
}

/// Everything the server answers from: member clusters and federated services.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fleet {
    /// Member clusters (their region and the networks their own DNS queries come from).
    #[serde(default)]
    pub clusters: Vec<ClusterInfo>,
    /// Federated services.
    #[serde(default)]
    pub services: Vec<FleetService>,
}

/// One member cluster.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterInfo {
    /// Cluster name (a DNS label: `<svc>.<ns>.<cluster>.<zone>`).
    pub name: String,
    /// Region of the cluster, if known.
    #[serde(default)]
    pub region: Option<String>,
    /// Where the member's own DNS queries come from; a query from these gets local-first answers.
    #[serde(default)]
    pub networks: Vec<ipnet::IpNet>,
}

/// A federated service and its endpoints in the members.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FleetService {
    /// Namespace of the hub Service.
    pub namespace: String,
    /// Name of the hub Service.
    pub name: String,
    /// TTL of its answers, in seconds.
    #[serde(default = "default_ttl")]
    pub ttl: u32,
    /// How the global name picks among healthy endpoints.
    #[serde(default)]
    pub strategy: Strategy,
    /// Ports; the named ones get SRV records.
    #[serde(default)]
    pub ports: Vec<ServicePort>,
    /// Every endpoint with its verdict.
    #[serde(default)]
    pub endpoints: Vec<Endpoint>,
}

/// A port of a service.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServicePort {
    /// Port name; empty for an unnamed port (no SRV record).
    #[serde(default)]
    pub name: String,
    /// `TCP`, `UDP` or `SCTP`.
    #[serde(default = "default_protocol")]
    pub protocol: String,
    /// Port number.
    pub port: u16,
}

fn default_protocol() -> String {
    "TCP".to_string()
}

/// One load-balancer address of a service in one member.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Endpoint {
    /// Member cluster running it.
    pub cluster: String,
    /// Region of that cluster, if known.
    #[serde(default)]
    pub region: Option<String>,
    /// The load-balancer ingress address.
    pub address: IpAddr,
    /// Health verdict of the voters.
    #[serde(default)]
    pub verdict: Verdict,
    /// The member's ClusterIP of the service, answered first to that member's own queries when known.
    #[serde(default)]
    pub cluster_ip: Option<IpAddr>,
}

/// Health verdict of an endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Verdict {
    /// A majority of fresh voters see it up (or no majority sees it down).
    Healthy,
    /// A strict majority of fresh voters see it down.
    Unhealthy,
    /// No fresh vote; answered like [`Verdict::Healthy`].
    #[default]
    Unknown,
}

impl Verdict {
    /// Whether the endpoint is answered (Healthy or Unknown).
    pub fn is_serving(self) -> bool {
        self != Verdict::Unhealthy
    }
}

/// How the global name of a service picks among its healthy endpoints.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all_fields = "camelCase")]
pub enum Strategy {
    /// All healthy endpoints, the order rotated per query.
    #[default]
    RoundRobin,
    /// Only the primary region's healthy endpoints while one is healthy, else all healthy ones.
    Failover {
        /// The preferred region.
        primary_region: String,
    },
    /// The healthy endpoints of the region nearest to the client.
    Geo,
    /// One weight entry per query, chosen with probability proportional to its weight.
    Weighted {
        /// Entries matching endpoints by region and/or cluster.
        weights: Vec<Weight>,
    },
}

/// One entry of a [`Strategy::Weighted`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Weight {
    /// Endpoints of this region (when set).
    #[serde(default)]
    pub region: Option<String>,
    /// Endpoints of this cluster (when set).
    #[serde(default)]
    pub cluster: Option<String>,
    /// Relative weight; 0 never answers.
    pub weight: u32,
}

impl Weight {
    /// Whether an endpoint belongs to this entry (every condition that is set holds; none set: none).
    pub fn matches(&self, endpoint: &Endpoint) -> bool {
        if self.region.is_none() && self.cluster.is_none() {
            return false;
        }
        self.region
            .as_ref()
            .is_none_or(|r| endpoint.region.as_ref() == Some(r))
            && self.cluster.as_ref().is_none_or(|c| &endpoint.cluster == c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_reads_from_camel_case_json_with_defaults() {
        let json = r#"{
          "clusters": [{"name": "a", "region": "eu", "networks": ["10.1.0.0/16"]}],
          "services": [{"namespace": "ns", "name": "web",
                        "strategy": {"type": "Failover", "primaryRegion": "eu"},
                        "ports": [{"name": "http", "port": 80}],
                        "endpoints": [{"cluster": "a", "address": "192.0.2.1", "clusterIp": "10.96.0.1"}]}]
        }"#;
        let fleet: Fleet = serde_json::from_str(json).unwrap();
        let svc = &fleet.services[0];
        assert_eq!(svc.ttl, DEFAULT_TTL);
        assert_eq!(
            svc.strategy,
            Strategy::Failover {
                primary_region: "eu".into()
            }
        );
        assert_eq!(svc.ports[0].protocol, "TCP");
        assert_eq!(svc.endpoints[0].verdict, Verdict::Unknown);
        assert_eq!(
            svc.endpoints[0].cluster_ip,
            Some("10.96.0.1".parse().unwrap())
        );
        assert_eq!(fleet.clusters[0].networks[0].prefix_len(), 16);
        let back: Fleet = serde_json::from_str(&serde_json::to_string(&fleet).unwrap()).unwrap();
        assert_eq!(back, fleet);
    }
}
