//! `externaldns.k8s.io/v1alpha1`: `DNSEndpoint`, in the shape external-dns's CRD source reads,
//! so external-dns can push the fleet's healthy records to Route 53, Cloud DNS and others.

use kube_derive::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The records of one or more DNS names.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "externaldns.k8s.io",
    version = "v1alpha1",
    kind = "DNSEndpoint",
    plural = "dnsendpoints",
    namespaced,
    status = "DnsEndpointStatus",
    derive = "PartialEq",
    doc = "DNSEndpoint holds DNS records for external-dns to publish. flotilla writes one per fleet Service name.",
    crates(kube_core = "::kube_core")
)]
#[serde(rename_all = "camelCase")]
pub struct DnsEndpointSpec {
    /// The records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<DnsRecord>,
}

/// One DNS record set, as external-dns's `Endpoint`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DnsRecord {
    /// The name.
    pub dns_name: String,
    /// The targets (addresses, or a name for a CNAME).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// A, AAAA, CNAME, SRV, ...
    pub record_type: String,
    /// Distinguishes several record sets of one name (weighted or geo routing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set_identifier: Option<String>,
    /// The TTL in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(rename = "recordTTL")]
    pub record_ttl: Option<i64>,
    /// Labels external-dns keeps with the record.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// Provider-specific settings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub provider_specific: Vec<ProviderSpecific>,
}

/// A provider-specific setting of a record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ProviderSpecific {
    /// The setting's name.
    pub name: String,
    /// Its value.
    pub value: String,
}

/// What external-dns last saw.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DnsEndpointStatus {
    /// The generation external-dns last published.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}
