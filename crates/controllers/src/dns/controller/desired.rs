//! What the DNS controller wants written, as pure functions of the judged Services
//! ([`super::super::fleet::judge`]): the voters' probe targets, a GlobalService's status, and
//! the records of a Service's DNSEndpoint.

use std::collections::BTreeMap;
use std::net::IpAddr;

use flotilla_apis::conditions::{self, Set};
use flotilla_apis::externaldns::DnsRecord;
use flotilla_apis::networking::v1alpha1::{
    EndpointStatus, EndpointVerdict, GlobalServiceStatus, ProbeTarget, CONDITION_FAIL_OPEN,
    CONDITION_SERVING,
};
use flotilla_dns::fleet::{Endpoint, FleetService, Verdict};
use flotilla_dns::verdict::fail_open;
use k8s_openapi::jiff::Timestamp;

use crate::dns::fleet::Judged;

/// Every endpoint of every judged Service whose check has a port, as every voter probes them
/// (sorted, so an unchanged fleet gives an unchanged list).
pub fn targets(judged: &[Judged]) -> Vec<ProbeTarget> {
    let mut targets: Vec<ProbeTarget> = judged
        .iter()
        .flat_map(|j| {
            let c = &j.check;
            j.service.endpoints.iter().filter_map(move |e| {
                Some(ProbeTarget {
                    namespace: j.service.namespace.clone(),
                    name: j.service.name.clone(),
                    cluster: e.cluster.clone(),
                    address: e.address.to_string(),
                    port: c.port?,
                    protocol: c.protocol,
                    path: c.path.clone(),
                    interval_seconds: c.interval_seconds,
                    timeout_seconds: c.timeout_seconds,
                    failure_threshold: c.failure_threshold,
                    success_threshold: c.success_threshold,
                })
            })
        })
        .collect();
    targets.sort_by(|a, b| {
        (&a.namespace, &a.name, &a.cluster, &a.address).cmp(&(
            &b.namespace,
            &b.name,
            &b.cluster,
            &b.address,
        ))
    });
    targets
}

/// The names served for a Service in `zone`: global, then per region, then per cluster.
pub fn names(service: &FleetService, zone: &str) -> Vec<String> {
    let base = format!("{}.{}", service.name, service.namespace);
    let zone = zone.trim_end_matches('.');
    let regions: std::collections::BTreeSet<&str> = service
        .endpoints
        .iter()
        .filter_map(|e| e.region.as_deref())
        .collect();
    let clusters: std::collections::BTreeSet<&str> = service
        .endpoints
        .iter()
        .map(|e| e.cluster.as_str())
        .collect();
    std::iter::once(format!("{base}.{zone}"))
        .chain(regions.iter().map(|r| format!("{base}.{r}.{zone}")))
        .chain(clusters.iter().map(|c| format!("{base}.{c}.{zone}")))
        .collect()
}

fn verdict(v: Verdict) -> EndpointVerdict {
    match v {
        Verdict::Healthy => EndpointVerdict::Healthy,
        Verdict::Unhealthy => EndpointVerdict::Unhealthy,
        Verdict::Unknown => EndpointVerdict::Unknown,
    }
}

/// A GlobalService's status for its judged Service: names, counts, each endpoint's votes and
/// verdict, fail-open, and the `Serving` and `FailOpen` conditions (times kept from
/// `previous` while a condition keeps its status).
pub fn global_status(
    judged: &Judged,
    zone: &str,
    previous: Option<&GlobalServiceStatus>,
    now: Timestamp,
) -> GlobalServiceStatus {
    let service = &judged.service;
    let total = service.endpoints.len() as u32;
    let healthy = service
        .endpoints
        .iter()
        .filter(|e| e.verdict.is_serving())
        .count() as u32;
    let open = fail_open(&service.endpoints);
    let mut conds = previous.map(|p| p.conditions.clone()).unwrap_or_default();
    let serving_message = format!("{healthy} of {total} endpoints answered as healthy");
    let serving = if healthy > 0 {
        ("True", "EndpointsHealthy")
    } else if open {
        ("False", "AllEndpointsDown")
    } else {
        ("False", "NoEndpoints")
    };
    conditions::set(
        &mut conds,
        Set {
            type_: CONDITION_SERVING,
            status: serving.0,
            reason: serving.1,
            message: &serving_message,
        },
        now,
    );
    let (status, reason, message) = if open {
        (
            "True",
            "AllEndpointsDown",
            "a majority of fresh voters sees every endpoint down; all of them are answered",
        )
    } else {
        ("False", "NotAllDown", "only healthy endpoints are answered")
    };
    conditions::set(
        &mut conds,
        Set {
            type_: CONDITION_FAIL_OPEN,
            status,
            reason,
            message,
        },
        now,
    );
    GlobalServiceStatus {
        names: names(service, zone),
        healthy_endpoints: healthy,
        total_endpoints: total,
        fail_open: open,
        endpoints: service
            .endpoints
            .iter()
            .zip(&judged.tallies)
            .map(|(e, t)| EndpointStatus {
                cluster: e.cluster.clone(),
                region: e.region.clone(),
                address: e.address.to_string(),
                votes_up: t.up,
                votes_down: t.down,
                verdict: verdict(e.verdict),
            })
            .collect(),
        conditions: conds,
    }
}

/// A/AAAA record sets of `name` with `addresses` (none when empty).
fn address_records(name: &str, addresses: &[IpAddr], ttl: i64) -> Vec<DnsRecord> {
    let mut v4: Vec<String> = addresses
        .iter()
        .filter(|a| a.is_ipv4())
        .map(IpAddr::to_string)
        .collect();
    let mut v6: Vec<String> = addresses
        .iter()
        .filter(|a| a.is_ipv6())
        .map(IpAddr::to_string)
        .collect();
    v4.sort();
    v6.sort();
    [("A", v4), ("AAAA", v6)]
        .into_iter()
        .filter(|(_, targets)| !targets.is_empty())
        .map(|(record_type, targets)| DnsRecord {
            dns_name: name.to_owned(),
            targets,
            record_type: record_type.to_owned(),
            record_ttl: Some(ttl),
            ..DnsRecord::default()
        })
        .collect()
}

/// The DNSEndpoint records of a Service in `zone`, for external-dns: the global name with the
/// healthy addresses (every address when failing open); each region's and cluster's name with
/// their healthy addresses, or, when none is healthy, a CNAME to the next wider name
/// (cluster → its region → global), as the DNS server answers them.
pub fn records(service: &FleetService, zone: &str) -> Vec<DnsRecord> {
    let zone = zone.trim_end_matches('.');
    let ttl = i64::from(service.ttl);
    let base = format!("{}.{}", service.name, service.namespace);
    let global = format!("{base}.{zone}");
    let open = fail_open(&service.endpoints);
    let serving = |e: &&Endpoint| open || e.verdict.is_serving();
    let all: Vec<IpAddr> = service
        .endpoints
        .iter()
        .filter(serving)
        .map(|e| e.address)
        .collect();
    let mut records = address_records(&global, &all, ttl);
    let mut regions: BTreeMap<&str, Vec<IpAddr>> = BTreeMap::new();
    let mut clusters: BTreeMap<&str, (Option<&str>, Vec<IpAddr>)> = BTreeMap::new();
    for e in &service.endpoints {
        let healthy = e.verdict.is_serving();
        if let Some(r) = e.region.as_deref() {
            let entry = regions.entry(r).or_default();
            if healthy {
                entry.push(e.address);
            }
        }
        let entry = clusters
            .entry(&e.cluster)
            .or_insert((e.region.as_deref(), Vec::new()));
        if healthy {
            entry.1.push(e.address);
        }
    }
    let cname = |name: String, target: String| DnsRecord {
        dns_name: name,
        targets: vec![target],
        record_type: "CNAME".to_owned(),
        record_ttl: Some(ttl),
        ..DnsRecord::default()
    };
    for (region, addresses) in &regions {
        let name = format!("{base}.{region}.{zone}");
        if addresses.is_empty() {
            records.push(cname(name, global.clone()));
        } else {
            records.extend(address_records(&name, addresses, ttl));
        }
    }
    for (cluster, (region, addresses)) in &clusters {
        let name = format!("{base}.{cluster}.{zone}");
        if addresses.is_empty() {
            let wider = match region {
                Some(r) => format!("{base}.{r}.{zone}"),
                None => global.clone(),
            };
            records.push(cname(name, wider));
        } else {
            records.extend(address_records(&name, addresses, ttl));
        }
    }
    records
}
