//! What `clusterset.local` answers (pure): from the hub's ServiceImports and the EndpointSlice
//! copies the exporting clusters' agents keep there, the [`Fleet`] the clusterset snapshot is
//! built from.

use std::collections::{BTreeMap, BTreeSet};
use std::net::IpAddr;

use flotilla_apis::multicluster::{
    ServiceImport, MANAGED_BY, MANAGED_BY_LABEL, SERVICE_NAMESPACE_LABEL, SERVICE_NAME_LABEL,
    SOURCE_CLUSTER_LABEL,
};
use flotilla_apis::names::execution_namespace;
use flotilla_dns::fleet::{Endpoint, Fleet, FleetService, ServicePort, Strategy, Verdict};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::ResourceExt;

/// TTL of clusterset answers, in seconds: short, they follow endpoints as they come and go.
pub const CLUSTERSET_TTL: u32 = 5;

/// The cluster named on a ServiceImport's own cluster-set IPs (they belong to no member).
pub const CLUSTERSET_IP_CLUSTER: &str = "clusterset";

/// One exporting cluster's ready addresses of one Service, keyed by (namespace, name).
type Ready<'a> = BTreeMap<(&'a str, &'a str), BTreeSet<(&'a str, IpAddr)>>;

/// The Service (namespace, name) and cluster a hub slice is an agent's copy for: it carries the
/// source cluster, the Service's name and namespace, flotilla's managed-by, and lives in that
/// cluster's own execution namespace (the only place its agent can write).
pub fn slice_owner(slice: &EndpointSlice) -> Option<(&str, &str, &str)> {
    let labels = slice.labels();
    let cluster = labels.get(SOURCE_CLUSTER_LABEL)?;
    let ours = labels.get(MANAGED_BY_LABEL).map(String::as_str) == Some(MANAGED_BY)
        && slice.metadata.namespace.as_deref() == Some(execution_namespace(cluster).as_str());
    ours.then_some((
        labels.get(SERVICE_NAMESPACE_LABEL)?.as_str(),
        labels.get(SERVICE_NAME_LABEL)?.as_str(),
        cluster.as_str(),
    ))
}

/// The addresses of a slice's ready endpoints (a missing `ready` condition counts as ready,
/// as the EndpointSlice API says); FQDN slices have none.
pub fn ready_addresses(slice: &EndpointSlice) -> impl Iterator<Item = IpAddr> + '_ {
    let ip = matches!(slice.address_type.as_str(), "IPv4" | "IPv6");
    slice
        .endpoints
        .iter()
        .filter(move |_| ip)
        .filter(|e| e.conditions.as_ref().and_then(|c| c.ready).unwrap_or(true))
        .flat_map(|e| e.addresses.iter())
        .filter_map(|a| a.parse().ok())
}

/// The fleet `clusterset.local` answers: one service per ServiceImport `ns/name`, named
/// `<name>.<ns>.svc.<zone>` by the snapshot, with
///
/// - its `spec.ips` when it is of type `ClusterSetIP` and has any;
/// - otherwise the ready addresses of the slices of every exporting cluster (those of its
///   `status.clusters`, or any cluster while it has no status), which is how flotilla answers
///   a ClusterSetIP import without a cluster-set VIP, and a Headless one;
/// - its named ports for SRV, TTL [`CLUSTERSET_TTL`].
///
/// An import with no ready endpoint still gets its service (NODATA rather than NXDOMAIN).
/// Services and endpoints are sorted, so equal inputs give equal fleets.
pub fn clusterset_fleet<'a>(
    imports: impl IntoIterator<Item = &'a ServiceImport>,
    slices: impl IntoIterator<Item = &'a EndpointSlice>,
) -> Fleet {
    let mut ready: Ready<'a> = BTreeMap::new();
    for slice in slices {
        if let Some((ns, name, cluster)) = slice_owner(slice) {
            let set = ready.entry((ns, name)).or_default();
            set.extend(ready_addresses(slice).map(|ip| (cluster, ip)));
        }
    }
    let mut services: Vec<FleetService> = imports
        .into_iter()
        .filter_map(|import| {
            let ns = import.metadata.namespace.as_deref()?;
            let name = import.metadata.name.as_deref()?;
            Some(service(import, ns, name, ready.get(&(ns, name))))
        })
        .collect();
    services.sort_by(|a, b| (&a.namespace, &a.name).cmp(&(&b.namespace, &b.name)));
    Fleet {
        clusters: Vec::new(),
        services,
    }
}

fn service(
    import: &ServiceImport,
    ns: &str,
    name: &str,
    ready: Option<&BTreeSet<(&str, IpAddr)>>,
) -> FleetService {
    let spec = &import.spec;
    let vips: BTreeSet<IpAddr> = spec.ips.iter().filter_map(|ip| ip.parse().ok()).collect();
    let endpoints = if spec.type_ == "ClusterSetIP" && !vips.is_empty() {
        vips.into_iter()
            .map(|ip| endpoint(CLUSTERSET_IP_CLUSTER, ip))
            .collect()
    } else {
        let exporting: Option<BTreeSet<&str>> = import
            .status
            .as_ref()
            .map(|s| s.clusters.iter().map(|c| c.cluster.as_str()).collect());
        let mut seen = BTreeSet::new();
        ready
            .into_iter()
            .flatten()
            .filter(|(cluster, _)| exporting.as_ref().is_none_or(|e| e.contains(cluster)))
            // an address two clusters report (overlapping pod networks) is answered once
            .filter(|(_, ip)| seen.insert(*ip))
            .map(|&(cluster, ip)| endpoint(cluster, ip))
            .collect()
    };
    let ports = spec
        .ports
        .iter()
        .filter_map(|p| {
            Some(ServicePort {
                name: p.name.clone().unwrap_or_default(),
                protocol: p.protocol.clone().unwrap_or_else(|| "TCP".into()),
                port: u16::try_from(p.port).ok()?,
            })
        })
        .collect();
    FleetService {
        namespace: ns.to_string(),
        name: name.to_string(),
        ttl: CLUSTERSET_TTL,
        strategy: Strategy::RoundRobin,
        ports,
        endpoints,
    }
}

fn endpoint(cluster: &str, address: IpAddr) -> Endpoint {
    Endpoint {
        cluster: cluster.to_string(),
        region: None,
        address,
        // no votes in the cluster set: a ready endpoint is answered
        verdict: Verdict::Healthy,
        cluster_ip: None,
    }
}
