//! From the hub's objects to the fleet the DNS server answers from: one pure function of what
//! the watches hold and the time, shared by the read-only [`super::source`] (answers) and the
//! writing [`super::controller`] (probe targets, GlobalService status, DNSEndpoints), so both
//! see the same endpoints and the same verdicts.
//!
//! A federated Service is a hub Service of type LoadBalancer that a ResourceBinding propagates.
//! Its endpoints are, per cluster of the binding's `aggregatedStatus`, every load-balancer
//! ingress IP that member reported, with the member's ClusterIP of the same family when it
//! reported one (answered first to the member's own queries). Each endpoint's verdict comes from the votes of every
//! HealthReport in an execution namespace whose result names it (namespace, name, cluster,
//! address and the checked port), counted by [`flotilla_dns::verdict::decide`] among the
//! fresh ones: a report is fresh while its `reportTime` is newer than three check intervals.

use std::collections::{BTreeSet, HashMap};
use std::net::IpAddr;
use std::sync::Arc;

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::names::cluster_of_execution_namespace;
use flotilla_apis::networking::v1alpha1::{
    GlobalService, HealthCheck, HealthReport, ProbeProtocol, StrategyType, DEFAULT_TTL_SECONDS,
};
use flotilla_apis::work::v1alpha1::{AggregatedStatusItem, ResourceBinding};
use flotilla_dns::fleet::{
    ClusterInfo, Endpoint, Fleet, FleetService, ServicePort, Strategy, Weight,
};
use flotilla_dns::verdict::{decide, Tally, Vote};
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;

use crate::propagation::works::feedback::CLUSTER_IPS;

/// What the watches hold: the inputs of [`judge`] and [`fleet_of`].
#[derive(Clone, Debug, Default)]
pub struct World {
    /// Every Cluster.
    pub clusters: Vec<Arc<Cluster>>,
    /// The hub's Services (any namespace).
    pub services: Vec<Arc<Service>>,
    /// ResourceBindings (those of other kinds than v1 Service are ignored).
    pub bindings: Vec<Arc<ResourceBinding>>,
    /// GlobalServices.
    pub global_services: Vec<Arc<GlobalService>>,
    /// HealthReports (only those in execution namespaces count).
    pub reports: Vec<Arc<HealthReport>>,
}

/// How every voter probes a federated Service's endpoints: its GlobalService's `healthCheck`
/// with the defaults filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// TCP, HTTP or HTTPS.
    pub protocol: ProbeProtocol,
    /// The port probed: the check's, else the Service's first; `None` when the Service has no
    /// port (then nothing is probed and every endpoint stays Unknown).
    pub port: Option<u16>,
    /// HTTP(S): the path (default `/`); `None` for TCP.
    pub path: Option<String>,
    /// Seconds between probes.
    pub interval_seconds: u32,
    /// Seconds a probe may take.
    pub timeout_seconds: u32,
    /// Consecutive failures before a voter sees an endpoint down.
    pub failure_threshold: u32,
    /// Consecutive successes before a voter sees it up again.
    pub success_threshold: u32,
}

impl Check {
    /// `check` (or the defaults) for a Service whose first port is `first_port`.
    pub fn resolve(check: Option<&HealthCheck>, first_port: Option<u16>) -> Check {
        let default = HealthCheck::default();
        let check = check.unwrap_or(&default);
        Check {
            protocol: check.protocol,
            port: check.port.or(first_port),
            path: match check.protocol {
                ProbeProtocol::Tcp => None,
                _ => Some(check.path.clone().unwrap_or_else(|| "/".to_owned())),
            },
            interval_seconds: check.interval(),
            timeout_seconds: check.timeout(),
            failure_threshold: check.failures(),
            success_threshold: check.successes(),
        }
    }
}

/// One federated Service, judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    /// What the DNS server answers for it (endpoints with their verdicts).
    pub service: FleetService,
    /// The fresh votes on each endpoint, in the order of `service.endpoints`.
    pub tallies: Vec<Tally>,
    /// How its endpoints are probed.
    pub check: Check,
    /// The hub Service's uid (for owner references).
    pub uid: Option<String>,
    /// Whether a GlobalService of the same name tunes it (and gets a status).
    pub has_global_service: bool,
}

/// The members: name, region and the networks their own queries come from (CIDRs that do not
/// parse are left out).
pub fn clusters(world: &World) -> Vec<ClusterInfo> {
    let mut clusters: Vec<ClusterInfo> = world
        .clusters
        .iter()
        .map(|c| ClusterInfo {
            name: c.name_any(),
            region: c.spec.region.clone(),
            networks: c
                .spec
                .networks
                .iter()
                .filter_map(|n| n.trim().parse().ok())
                .collect(),
        })
        .collect();
    clusters.sort_by(|a, b| a.name.cmp(&b.name));
    clusters
}

/// The voters' results by endpoint (namespace, name, cluster, address, port): whether each
/// saw it up, and when its report was written.
type Ballots<'a> =
    HashMap<(&'a str, &'a str, &'a str, &'a str, u16), Vec<(bool, Option<Timestamp>)>>;

fn ballots(reports: &[Arc<HealthReport>]) -> Ballots<'_> {
    let mut ballots: Ballots<'_> = HashMap::new();
    for report in reports {
        let in_execution_namespace = report
            .metadata
            .namespace
            .as_deref()
            .and_then(cluster_of_execution_namespace)
            .is_some();
        let Some(status) = report.status.as_ref().filter(|_| in_execution_namespace) else {
            continue;
        };
        let time = status.report_time.as_ref().map(|t| t.0);
        for r in &status.results {
            let key = (
                r.namespace.as_str(),
                r.name.as_str(),
                r.cluster.as_str(),
                r.address.as_str(),
                r.port,
            );
            ballots.entry(key).or_default().push((r.up, time));
        }
    }
    ballots
}

/// Every federated Service with its endpoints' verdicts at `now`, ordered by namespace and
/// name.
pub fn judge(world: &World, now: Timestamp) -> Vec<Judged> {
    let services: HashMap<(&str, &str), &Service> = world
        .services
        .iter()
        .filter_map(|s| {
            Some((
                (
                    s.metadata.namespace.as_deref()?,
                    s.metadata.name.as_deref()?,
                ),
                &**s,
            ))
        })
        .collect();
    let globals: HashMap<(&str, &str), &GlobalService> = world
        .global_services
        .iter()
        .filter_map(|g| {
            Some((
                (
                    g.metadata.namespace.as_deref()?,
                    g.metadata.name.as_deref()?,
                ),
                &**g,
            ))
        })
        .collect();
    let regions: HashMap<String, Option<String>> = world
        .clusters
        .iter()
        .map(|c| (c.name_any(), c.spec.region.clone()))
        .collect();
    let ballots = ballots(&world.reports);
    let mut judged: Vec<Judged> = Vec::new();
    let mut seen: BTreeSet<(&str, &str)> = BTreeSet::new();
    for binding in &world.bindings {
        let r = &binding.spec.resource;
        let Some(ns) = binding.metadata.namespace.as_deref() else {
            continue;
        };
        if !r.is_service() || r.namespace.as_deref().is_some_and(|n| n != ns) {
            continue;
        }
        let Some(svc) = services.get(&(ns, r.name.as_str())) else {
            continue;
        };
        let spec = svc.spec.as_ref();
        let uid = svc.metadata.uid.clone();
        let load_balancer = spec.and_then(|s| s.type_.as_deref()) == Some("LoadBalancer");
        let same_object = r.uid.is_none() || uid.is_none() || r.uid == uid;
        if !load_balancer || !same_object || !seen.insert((ns, r.name.as_str())) {
            continue;
        }
        let global = globals.get(&(ns, r.name.as_str())).copied();
        let ports: Vec<ServicePort> = spec
            .and_then(|s| s.ports.as_ref())
            .into_iter()
            .flatten()
            .filter_map(|p| {
                Some(ServicePort {
                    name: p.name.clone().unwrap_or_default(),
                    protocol: p.protocol.clone().unwrap_or_else(|| "TCP".to_owned()),
                    port: u16::try_from(p.port).ok()?,
                })
            })
            .collect();
        let check = Check::resolve(
            global.and_then(|g| g.spec.health_check.as_ref()),
            ports.first().map(|p| p.port),
        );
        let members = binding.status.iter().flat_map(|s| &s.aggregated_status);
        let cluster_ips: HashMap<&str, Vec<IpAddr>> = members
            .clone()
            .map(|item| (item.cluster_name.as_str(), member_cluster_ips(item)))
            .collect();
        let mut addresses: Vec<(String, IpAddr)> = members
            .flat_map(|item| {
                let ingress = item
                    .status
                    .as_ref()
                    .and_then(|s| s.pointer("/loadBalancer/ingress"))
                    .and_then(|i| i.as_array());
                ingress
                    .into_iter()
                    .flatten()
                    .filter_map(|point| point.get("ip")?.as_str()?.parse::<IpAddr>().ok())
                    .map(|ip| (item.cluster_name.clone(), ip))
            })
            .collect();
        addresses.sort();
        addresses.dedup();
        let fresh_for = f64::from(check.interval_seconds) * 3.0;
        let (endpoints, tallies): (Vec<Endpoint>, Vec<Tally>) = addresses
            .into_iter()
            .map(|(cluster, address)| {
                let text = address.to_string();
                let votes: Vec<Vote> = check
                    .port
                    .and_then(|port| {
                        ballots.get(&(ns, r.name.as_str(), cluster.as_str(), text.as_str(), port))
                    })
                    .into_iter()
                    .flatten()
                    .map(|(up, time)| Vote {
                        up: *up,
                        fresh: time
                            .is_some_and(|t| now.duration_since(t).as_secs_f64() < fresh_for),
                    })
                    .collect();
                let tally = decide(&votes);
                let cluster_ip = cluster_ips
                    .get(cluster.as_str())
                    .and_then(|ips| cluster_ip_for(ips, address));
                let endpoint = Endpoint {
                    region: regions.get(&cluster).cloned().flatten(),
                    cluster,
                    address,
                    verdict: tally.verdict,
                    cluster_ip,
                };
                (endpoint, tally)
            })
            .unzip();
        judged.push(Judged {
            service: FleetService {
                namespace: ns.to_owned(),
                name: r.name.clone(),
                ttl: global
                    .and_then(|g| g.spec.ttl_seconds)
                    .unwrap_or(DEFAULT_TTL_SECONDS),
                strategy: global.map(strategy).unwrap_or_default(),
                ports,
                endpoints,
            },
            tallies,
            check,
            uid,
            has_global_service: global.is_some(),
        });
    }
    judged.sort_by(|a, b| {
        (&a.service.namespace, &a.service.name).cmp(&(&b.service.namespace, &b.service.name))
    });
    judged
}

/// The ClusterIPs a member reported for its copy of the Service (see
/// [`crate::propagation::works::feedback::member_status`]); those that do not parse are left out.
fn member_cluster_ips(item: &AggregatedStatusItem) -> Vec<IpAddr> {
    item.status
        .as_ref()
        .and_then(|s| s.get(CLUSTER_IPS)?.as_array())
        .into_iter()
        .flatten()
        .filter_map(|ip| ip.as_str()?.parse().ok())
        .collect()
}

/// The member's ClusterIP answered with its load-balancer `address` to the member's own
/// queries: the one of the address's family, else its primary.
fn cluster_ip_for(ips: &[IpAddr], address: IpAddr) -> Option<IpAddr> {
    ips.iter()
        .find(|ip| ip.is_ipv4() == address.is_ipv4())
        .or(ips.first())
        .copied()
}

/// A GlobalService's strategy as the DNS server takes it; Failover without a primary region
/// answers as RoundRobin.
fn strategy(global: &GlobalService) -> Strategy {
    let s = &global.spec.strategy;
    match s.type_ {
        StrategyType::RoundRobin => Strategy::RoundRobin,
        StrategyType::Failover => match &s.primary_region {
            Some(primary_region) => Strategy::Failover {
                primary_region: primary_region.clone(),
            },
            None => Strategy::RoundRobin,
        },
        StrategyType::Geo => Strategy::Geo,
        StrategyType::Weighted => Strategy::Weighted {
            weights: s
                .weights
                .iter()
                .map(|w| Weight {
                    region: w.region.clone(),
                    cluster: w.cluster.clone(),
                    weight: w.weight,
                })
                .collect(),
        },
    }
}

/// The fleet the DNS server answers from at `now`.
pub fn fleet_of(world: &World, now: Timestamp) -> Fleet {
    Fleet {
        clusters: clusters(world),
        services: judge(world, now).into_iter().map(|j| j.service).collect(),
    }
}

#[cfg(test)]
mod tests;
