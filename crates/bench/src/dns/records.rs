//! The records both DNS servers serve, generated once and written two ways: a zone file (with
//! the `knot.conf` that loads it) for knotd, and a [`Fleet`] JSON file for `flotilla dns
//! --fleet-file`. The fleet is N services, each run by the same clusters `m1`, `m2`, … (one
//! per region while there are regions left), one IPv4 load-balancer address per cluster and
//! service, every endpoint healthy and the default round-robin strategy, so flotilla answers
//! every endpoint of a name as knotd answers every A record of it.
//!
//! Names, as flotilla serves them under the zone: `<svc>.<ns>` (every endpoint),
//! `<svc>.<ns>.<region>` and `<svc>.<ns>.<cluster>` (that region's or cluster's endpoints).

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

use flotilla_dns::fleet::{ClusterInfo, Endpoint, Fleet, FleetService, Strategy, Verdict};
use rand::seq::SliceRandom;
use rand::SeedableRng;

/// The zone both servers are authoritative for.
pub const ZONE: &str = "fleet.bench.test";

/// TTL of every answer (flotilla's default).
pub const TTL: u32 = 30;

/// Regions the clusters are spread over, in turn.
const REGIONS: [&str; 3] = ["eu-west", "us-east", "ap-south"];

/// Namespaces the services are spread over, in turn.
const NAMESPACES: usize = 10;

/// Seed of the query order: the same counts give the same query file every run.
const SEED: u64 = 13;

/// A member cluster of the generated fleet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cluster {
    /// `m1`, `m2`, …
    pub name: String,
    /// Its region.
    pub region: String,
}

/// A generated service and its endpoints, one per cluster (in cluster order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Service {
    /// `team-<i mod 10>`.
    pub namespace: String,
    /// `svc-<i>`, zero-padded to five digits.
    pub name: String,
    /// The load-balancer address of the service in each cluster.
    pub addresses: Vec<Ipv4Addr>,
}

/// The generated fleet: its clusters and services.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The clusters, `m1` … `m<endpoints>`.
    pub clusters: Vec<Cluster>,
    /// The services.
    pub services: Vec<Service>,
}

impl Generated {
    /// `services` services with `endpoints` endpoints each (one per cluster).
    pub fn new(services: usize, endpoints: usize) -> Generated {
        let clusters = (0..endpoints)
            .map(|c| Cluster {
                name: format!("m{}", c + 1),
                region: REGIONS[c % REGIONS.len()].to_string(),
            })
            .collect();
        let services = (0..services)
            .map(|s| Service {
                namespace: format!("team-{}", s % NAMESPACES),
                name: format!("svc-{s:05}"),
                addresses: (0..endpoints).map(|c| address(c, s)).collect(),
            })
            .collect();
        Generated { clusters, services }
    }

    /// The fleet as `flotilla dns --fleet-file` reads it, every endpoint with `verdict`
    /// except those listed in `unhealthy` (service index, cluster index).
    pub fn fleet(&self, unhealthy: &[(usize, usize)]) -> Fleet {
        let clusters = self
            .clusters
            .iter()
            .map(|c| ClusterInfo {
                name: c.name.clone(),
                region: Some(c.region.clone()),
                networks: Vec::new(),
            })
            .collect();
        let services = self
            .services
            .iter()
            .enumerate()
            .map(|(s, svc)| FleetService {
                namespace: svc.namespace.clone(),
                name: svc.name.clone(),
                ttl: TTL,
                strategy: Strategy::RoundRobin,
                ports: Vec::new(),
                endpoints: self
                    .clusters
                    .iter()
                    .zip(&svc.addresses)
                    .enumerate()
                    .map(|(c, (cluster, ip))| Endpoint {
                        cluster: cluster.name.clone(),
                        region: Some(cluster.region.clone()),
                        address: IpAddr::V4(*ip),
                        verdict: if unhealthy.contains(&(s, c)) {
                            Verdict::Unhealthy
                        } else {
                            Verdict::Healthy
                        },
                        cluster_ip: None,
                    })
                    .collect(),
            })
            .collect();
        Fleet { clusters, services }
    }

    /// The zone file knotd loads: SOA and NS at the apex, then for every service the A
    /// records of its global, regional and cluster names.
    pub fn zone_file(&self, zone: &str) -> String {
        let mut out = format!(
            "$ORIGIN {zone}.\n$TTL {TTL}\n\
             @ SOA ns hostmaster 1 3600 600 86400 {TTL}\n@ NS ns\nns A 127.0.0.1\n"
        );
        for svc in &self.services {
            let base = format!("{}.{}", svc.name, svc.namespace);
            for ip in &svc.addresses {
                // Infallible: writing to a String.
                let _ = writeln!(out, "{base} A {ip}");
            }
            for (cluster, ip) in self.clusters.iter().zip(&svc.addresses) {
                let _ = writeln!(out, "{base}.{} A {ip}", cluster.region);
            }
            for (cluster, ip) in self.clusters.iter().zip(&svc.addresses) {
                let _ = writeln!(out, "{base}.{} A {ip}", cluster.name);
            }
        }
        out
    }

    /// The global name of service `s` under `zone`.
    pub fn global_name(&self, s: usize, zone: &str) -> String {
        let svc = &self.services[s];
        format!("{}.{}.{zone}", svc.name, svc.namespace)
    }

    /// dnsperf's input: `<name> A` for the global name of every service, in a fixed shuffled
    /// order.
    pub fn queries(&self, zone: &str) -> String {
        let mut order: Vec<usize> = (0..self.services.len()).collect();
        order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(SEED));
        let mut out = String::with_capacity(order.len() * 40);
        for s in order {
            out += &self.global_name(s, zone);
            out += " A\n";
        }
        out
    }
}

/// The address of service `s` in cluster `c`: 10.0.0.0/8, 2^20 addresses per cluster.
fn address(c: usize, s: usize) -> Ipv4Addr {
    let base = u32::from(Ipv4Addr::new(10, 0, 0, 0));
    // The benchmark's counts keep s below 2^20 and c below 16 (checked by the caller).
    Ipv4Addr::from(base + ((c as u32) << 20) + s as u32 + 1)
}

/// Most services the address plan holds.
pub const MAX_SERVICES: usize = (1 << 20) - 1;
/// Most endpoints (clusters) per service the address plan holds.
pub const MAX_ENDPOINTS: usize = 16;

/// knotd's configuration: listen on 127.0.0.1 at `port`, keep everything in `dir`, serve
/// `zone` from `zone_file`, with `background_workers` (the machine's cores) and knotd's
/// defaults otherwise (UDP and TCP workers: one per core).
pub fn knot_conf(
    dir: &Path,
    port: u16,
    zone: &str,
    zone_file: &Path,
    background_workers: usize,
) -> String {
    let dir = dir.display();
    format!(
        "server:\n    listen: 127.0.0.1@{port}\n    rundir: \"{dir}\"\n    \
         background-workers: {background_workers}\n\
         database:\n    storage: \"{dir}\"\n\
         log:\n  - target: stderr\n    any: warning\n\
         zone:\n  - domain: {zone}\n    storage: \"{dir}\"\n    file: \"{}\"\n",
        zone_file.display()
    )
}

#[cfg(test)]
mod tests;
