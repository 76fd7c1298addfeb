//! Building a [`Snapshot`] from a [`Fleet`]: names, empty non-terminals and each strategy's choices.
//!
//! The [`Builder`] adds one service at a time and remembers what it takes to take one out again
//! (the names each service added, how many names lie below each name), so that
//! [`super::SnapshotBuilder`] can redo only the services that changed.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::net::IpAddr;

use tracing::warn;

use super::names::Names;
use super::rrset::NO_CLUSTER;
use super::{AddrSet, Node, Pick, Rrset, ServiceNode, Snapshot, SnapshotOptions};
use crate::fleet::{ClusterInfo, Fleet, FleetService, Strategy};
use crate::geo::{ip_bits, GeoTable, UNKNOWN_DISTANCE};
use crate::hash::FastBuild;
use crate::wire::{self, TYPE_CNAME, TYPE_NS, TYPE_SOA, TYPE_SRV};
use crate::{verdict, Error, Result};

/// An endpoint with its cluster resolved to an index.
struct Ep<'a> {
    cluster: u16,
    cluster_name: &'a str,
    region: Option<&'a str>,
    address: IpAddr,
    cluster_ip: Option<IpAddr>,
}

/// Member clusters by index: the fleet's clusters first, then any only endpoints name.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Clusters {
    index: HashMap<Box<str>, u16>,
    regions: Vec<Option<Box<str>>>,
    /// Whether each cluster has networks (only those get local-first records).
    has_networks: Vec<bool>,
}

/// The names being built and what it takes to change them one service at a time.
#[derive(Default)]
pub(super) struct Table {
    pub(super) names: Names,
    /// How many inserted names lie below each name that has any.
    pub(super) below: HashMap<Box<[u8]>, u32, FastBuild>,
    /// Data names the current service added, concatenated wire names without the zone.
    pub(super) log: Vec<u8>,
    /// Whether two services (or a service and the apex) wanted the same name.
    pub(super) conflict: bool,
}

pub(super) struct Builder<'a> {
    pub(super) zone: Vec<u8>,
    pub(super) table: Table,
    pub(super) clusters: Clusters,
    /// Whether a service's endpoints added a cluster or a cluster's region (the table then
    /// depends on the order of services).
    pub(super) clusters_grew: bool,
    geo: &'a GeoTable,
    /// Wire labels between `<svc>.<ns>` and the zone ([`SnapshotOptions::service_suffix`]).
    suffix: Vec<u8>,
    scoped: bool,
}

impl Snapshot {
    /// Builds the answers for `zone` from `fleet`. Fails only for an invalid zone or options; a
    /// service whose names are not valid DNS names is left out with a warning.
    pub fn build(
        zone: &str,
        fleet: &Fleet,
        geo: &GeoTable,
        options: &SnapshotOptions,
    ) -> Result<Snapshot> {
        let services: Vec<&FleetService> = fleet.services.iter().collect();
        Ok(full(
            zone,
            &fleet.clusters,
            services,
            geo,
            options,
            &mut |_, _| {},
        )?
        .0)
    }
}

/// The zone's lowercased wire form, or why it is no zone.
pub(super) fn zone_wire(zone: &str) -> Result<Vec<u8>> {
    wire::name_to_wire(zone).map_err(|e| Error::InvalidZone {
        zone: zone.to_string(),
        message: e.to_string(),
    })
}

/// The serial of a build: the option's, else seconds since the epoch.
pub(super) fn serial(options: &SnapshotOptions) -> u32 {
    options.serial.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as u32)
            .unwrap_or(1)
    })
}

/// Builds everything from `fleet`; `added` hears of each service with the data names it added
/// (see [`Table::log`]). Returns the snapshot and the builder's state.
///
/// Services given by value are dropped as soon as they are added, so the fleet's memory goes as
/// the snapshot's grows.
pub(super) fn full<'a, S: Borrow<FleetService>>(
    zone: &str,
    clusters: &[ClusterInfo],
    services: Vec<S>,
    geo: &'a GeoTable,
    options: &SnapshotOptions,
    added: &mut dyn FnMut(&FleetService, &[u8]),
) -> Result<(Snapshot, Builder<'a>)> {
    let zone_wire = zone_wire(zone)?;
    let mut builder = Builder::new(
        zone_wire.clone(),
        geo,
        options,
        Table::default(),
        Clusters::default(),
    )?;
    for cluster in clusters {
        let index = builder.cluster(&cluster.name, cluster.region.as_deref());
        builder.clusters.has_networks[index as usize] |= !cluster.networks.is_empty();
    }
    builder.clusters_grew = false;
    // each service's global name, a name per region and per cluster, and per named port
    let expected: usize = services
        .iter()
        .map(Borrow::borrow)
        .map(|s| 1 + 2 * s.endpoints.len() * usize::from(builder.scoped) + s.ports.len())
        .sum();
    builder.table.names.reserve(expected);
    let local_nets = local_nets(clusters);
    let serial = serial(options);
    let (soa_negative, glue) = builder.apex(zone, options, serial)?;
    for service in services {
        builder.add(service.borrow());
        added(service.borrow(), &builder.table.log);
    }
    builder.table.names.shrink();
    let snapshot = Snapshot {
        zone: zone_wire.into_boxed_slice(),
        zone_text: zone.to_string(),
        names: builder.table.names.clone(),
        soa_negative,
        glue,
        local_nets,
        geo: geo.clone(),
        serial,
    };
    Ok((snapshot, builder))
}

/// Member networks, longest prefix first: (address bits, width, prefix length, cluster index).
fn local_nets(fleet: &[ClusterInfo]) -> Vec<(u128, u8, u8, u16)> {
    let mut clusters = Clusters::default();
    let mut nets = Vec::new();
    for cluster in fleet {
        let index = clusters.get_or_add(&cluster.name, None, &mut false);
        for net in &cluster.networks {
            let (bits, width) = ip_bits(net.network());
            nets.push((bits, width, net.prefix_len(), index));
        }
    }
    nets.sort_by_key(|net| std::cmp::Reverse(net.2));
    nets
}

/// The apex's SOA and NS, the SOA for negative answers, and the name server's wire name.
pub(super) fn apex(
    zone: &str,
    options: &SnapshotOptions,
    serial: u32,
) -> Result<(Node, Box<[u8]>, Vec<u8>)> {
    let bare = zone.trim_end_matches('.');
    let under = |label: &str| {
        if bare.is_empty() {
            label.to_string()
        } else {
            format!("{label}.{bare}")
        }
    };
    let ns = wire::name_to_wire(&options.ns_name.clone().unwrap_or_else(|| under("ns1")))?;
    let rname = wire::name_to_wire(
        &options
            .hostmaster
            .clone()
            .unwrap_or_else(|| under("hostmaster")),
    )?;
    let soa_rdata = |minimum: u32| {
        let mut rdata = Vec::with_capacity(ns.len() + rname.len() + 20);
        rdata.extend_from_slice(&ns);
        rdata.extend_from_slice(&rname);
        for n in [serial, 3600, 600, 86400, minimum] {
            rdata.extend_from_slice(&n.to_be_bytes());
        }
        rdata
    };
    let negative = options.negative_ttl.min(options.soa_ttl);
    let soa = wire::record(TYPE_SOA, options.soa_ttl, &soa_rdata(options.negative_ttl));
    let soa_negative = wire::record(TYPE_SOA, negative, &soa_rdata(options.negative_ttl));
    let ns_record = wire::record(TYPE_NS, options.soa_ttl, &ns);
    let node = Node::Static(Box::new([
        (TYPE_SOA, Rrset::new([(NO_CLUSTER, soa.as_slice())])),
        (TYPE_NS, Rrset::new([(NO_CLUSTER, ns_record.as_slice())])),
    ]));
    Ok((node, soa_negative.into_boxed_slice(), ns))
}

// === impl Clusters ===

impl Clusters {
    /// The index of `name`, added if new; a region fills in a cluster's missing one. `grew`
    /// becomes true when the table changes.
    fn get_or_add(&mut self, name: &str, region: Option<&str>, grew: &mut bool) -> u16 {
        if let Some(&index) = self.index.get(name) {
            let known = &mut self.regions[index as usize];
            if known.is_none() && region.is_some() {
                *known = region.map(Into::into);
                *grew = true;
            }
            return index;
        }
        let index = self.regions.len() as u16;
        self.index.insert(name.into(), index);
        self.regions.push(region.map(Into::into));
        self.has_networks.push(false);
        *grew = true;
        index
    }
}

/// Appends `labels` (a wire name without the zone) to a log: its label count, then the labels.
fn log_name(log: &mut Vec<u8>, labels: &[u8]) {
    let mut count = 0u8;
    let mut pos = 0;
    while pos < labels.len() {
        count += 1;
        pos += 1 + labels[pos] as usize;
    }
    log.push(count);
    log.extend_from_slice(labels);
}

// === impl Table ===

impl Table {
    /// Adds a name and the empty non-terminals above it (down to `apex_len` bytes, the zone's
    /// length). A name that already holds data keeps it.
    pub(super) fn insert(&mut self, apex_len: usize, name: Vec<u8>, node: Node) {
        let apex = name.len() - apex_len;
        let mut pos = 1 + name[0] as usize;
        while pos < apex {
            let above = &name[pos..];
            match self.below.get_mut(above) {
                Some(count) => *count += 1,
                None => {
                    self.below.insert(above.into(), 1);
                }
            }
            // look before copying a shared shard: parents mostly exist already
            if self.names.get(above).is_none() {
                self.names
                    .shard_mut(above)
                    .insert(above.into(), Node::Empty);
            }
            pos += 1 + name[pos] as usize;
        }
        let shard = self.names.shard_mut(&name);
        match shard.get_mut(name.as_slice()) {
            Some(existing @ Node::Empty) => {
                *existing = node;
                log_name(&mut self.log, &name[..apex]);
            }
            Some(_) if matches!(node, Node::Empty) => {}
            Some(_) => {
                self.conflict = true;
                warn!(name = %wire::wire_to_text(&name), "DNS name defined twice; the first kept")
            }
            None => {
                if !matches!(node, Node::Empty) {
                    log_name(&mut self.log, &name[..apex]);
                }
                shard.insert(name.into_boxed_slice(), node);
            }
        }
    }

    /// Takes out the data names of `log` (as [`Table::log`] recorded them) and the empty
    /// non-terminals nothing is below any more.
    pub(super) fn remove(&mut self, zone: &[u8], log: &[u8]) {
        let mut at = 0;
        let mut name = Vec::with_capacity(256);
        while at < log.len() {
            let start = at;
            let labels = log[at] as usize;
            at += 1;
            for _ in 0..labels {
                at += 1 + log[at] as usize;
            }
            name.clear();
            name.extend_from_slice(&log[start + 1..at]);
            name.extend_from_slice(zone);
            self.remove_one(zone.len(), &name);
        }
    }

    fn remove_one(&mut self, apex_len: usize, name: &[u8]) {
        let below = self.below.get(name).copied().unwrap_or(0);
        let shard = self.names.shard_mut(name);
        if below > 0 {
            shard.insert(name.into(), Node::Empty);
        } else {
            shard.remove(name);
        }
        let apex = name.len() - apex_len;
        let mut pos = 1 + name[0] as usize;
        while pos < apex {
            let above = &name[pos..];
            let left = match self.below.get_mut(above) {
                Some(count) => {
                    *count -= 1;
                    *count
                }
                None => 0,
            };
            if left == 0 {
                self.below.remove(above);
                if matches!(self.names.get(above), Some(Node::Empty)) {
                    self.names.shard_mut(above).remove(above);
                }
            }
            pos += 1 + name[pos] as usize;
        }
    }
}

// === impl Builder ===

impl<'a> Builder<'a> {
    /// A builder adding to `table` with the cluster indices of `clusters`.
    pub(super) fn new(
        zone: Vec<u8>,
        geo: &'a GeoTable,
        options: &SnapshotOptions,
        table: Table,
        clusters: Clusters,
    ) -> Result<Builder<'a>> {
        let suffix = match options.service_suffix.as_deref() {
            Some(suffix) => {
                let mut labels = wire::name_to_wire(suffix)?;
                labels.pop();
                labels
            }
            None => Vec::new(),
        };
        Ok(Builder {
            zone,
            table,
            clusters,
            clusters_grew: false,
            geo,
            suffix,
            scoped: options.scoped_names,
        })
    }

    pub(super) fn cluster(&mut self, name: &str, region: Option<&str>) -> u16 {
        self.clusters
            .get_or_add(name, region, &mut self.clusters_grew)
    }

    /// `labels` (most specific first) followed by the zone, lowercased wire form.
    fn name(&self, labels: &[&str]) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(64);
        for label in labels {
            wire::check_label(label)?;
            out.push(label.len() as u8);
            out.extend(label.bytes().map(|b| b.to_ascii_lowercase()));
        }
        out.extend_from_slice(&self.suffix);
        out.extend_from_slice(&self.zone);
        if out.len() > 255 {
            return Err(Error::InvalidName {
                name: wire::wire_to_text(&out),
                message: "name longer than 255 bytes".into(),
            });
        }
        Ok(out)
    }

    /// Adds `service`'s names; afterwards [`Table::log`] holds the data names it added.
    pub(super) fn add(&mut self, service: &FleetService) {
        self.table.log.clear();
        if let Err(error) = self.service(service) {
            warn!(namespace = %service.namespace, service = %service.name, %error,
                  "service left out of the DNS snapshot");
        }
    }

    /// SOA and NS at the apex, glue for the name server; returns the SOA for negative answers.
    fn apex(
        &mut self,
        zone: &str,
        options: &SnapshotOptions,
        serial: u32,
    ) -> Result<(Box<[u8]>, Rrset)> {
        let (apex, soa_negative, ns) = apex(zone, options, serial)?;
        self.table
            .names
            .shard_mut(&self.zone)
            .insert(self.zone.clone().into_boxed_slice(), apex);
        let mut all_glue = Vec::new();
        if wire::zone_offset(&ns, &self.zone).is_some_and(|off| off > 0) {
            let glue: Vec<(u16, Rrset)> = [wire::TYPE_A, wire::TYPE_AAAA]
                .into_iter()
                .filter_map(|rtype| {
                    let records: Vec<Vec<u8>> = options
                        .ns_addresses
                        .iter()
                        .filter(|ip| (rtype == wire::TYPE_A) == ip.is_ipv4())
                        .map(|&ip| wire::address_record(ip, options.soa_ttl))
                        .collect();
                    (!records.is_empty()).then(|| {
                        (
                            rtype,
                            Rrset::new(records.iter().map(|r| (NO_CLUSTER, r.as_slice()))),
                        )
                    })
                })
                .collect();
            for (_, set) in &glue {
                all_glue.extend(set.iter().map(|(_, r)| r.to_vec()));
            }
            self.table
                .insert(self.zone.len(), ns, Node::Static(glue.into_boxed_slice()));
        }
        let glue = Rrset::new(all_glue.iter().map(|r| (NO_CLUSTER, r.as_slice())));
        Ok((soa_negative, glue))
    }

    fn service(&mut self, service: &FleetService) -> Result<()> {
        let fail_open = verdict::fail_open(&service.endpoints);
        if fail_open {
            warn!(namespace = %service.namespace, service = %service.name,
                  "every endpoint is unhealthy: answering all of them (fail open)");
        }
        let indices: Vec<u16> = service
            .endpoints
            .iter()
            .map(|e| self.cluster(&e.cluster, e.region.as_deref()))
            .collect();
        let mut all = Vec::with_capacity(service.endpoints.len());
        let mut serving = Vec::with_capacity(service.endpoints.len());
        for (endpoint, &cluster) in service.endpoints.iter().zip(&indices) {
            let region = endpoint
                .region
                .as_deref()
                .or(self.clusters.regions[cluster as usize].as_deref());
            let ep = Ep {
                cluster,
                cluster_name: &endpoint.cluster,
                region,
                address: endpoint.address,
                cluster_ip: endpoint.cluster_ip,
            };
            if fail_open || endpoint.verdict.is_serving() {
                serving.push(all.len());
            }
            all.push(ep);
        }
        let serving: Vec<&Ep> = serving.iter().map(|&i| &all[i]).collect();
        let (svc, ns, ttl) = (
            service.name.as_str(),
            service.namespace.as_str(),
            service.ttl,
        );
        let global = self.name(&[svc, ns])?;
        let node = self.service_node(&serving, &service.strategy, ttl);
        self.table.insert(self.zone.len(), global.clone(), node);

        let mut regions: Vec<&str> = all
            .iter()
            .filter(|_| self.scoped)
            .filter_map(|e| e.region)
            .collect();
        regions.sort_unstable();
        regions.dedup();
        let mut region_names = HashMap::new();
        for region in regions {
            let name = self.name(&[svc, ns, region])?;
            let within: Vec<&Ep> = serving
                .iter()
                .copied()
                .filter(|e| e.region == Some(region))
                .collect();
            let node = if within.is_empty() {
                cname(&global, ttl)
            } else {
                self.service_node(&within, &Strategy::RoundRobin, ttl)
            };
            region_names.insert(region, name.clone());
            self.table.insert(self.zone.len(), name, node);
        }
        let mut clusters: Vec<(&str, u16, Option<&str>)> = all
            .iter()
            .filter(|_| self.scoped)
            .map(|e| (e.cluster_name, e.cluster, e.region))
            .collect();
        clusters.sort_unstable();
        clusters.dedup_by_key(|c| c.0);
        for (cluster_name, cluster, region) in clusters {
            let name = self.name(&[svc, ns, cluster_name])?;
            let within: Vec<&Ep> = serving
                .iter()
                .copied()
                .filter(|e| e.cluster == cluster)
                .collect();
            let node = if within.is_empty() {
                cname(
                    region.and_then(|r| region_names.get(r)).unwrap_or(&global),
                    ttl,
                )
            } else {
                self.service_node(&within, &Strategy::RoundRobin, ttl)
            };
            self.table.insert(self.zone.len(), name, node);
        }
        for port in service.ports.iter().filter(|p| !p.name.is_empty()) {
            let port_label = format!("_{}", port.name);
            let proto_label = format!("_{}", port.protocol.to_ascii_lowercase());
            let name = self.name(&[&port_label, &proto_label, svc, ns])?;
            let mut rdata = Vec::with_capacity(6 + global.len());
            for n in [0u16, 0, port.port] {
                rdata.extend_from_slice(&n.to_be_bytes());
            }
            rdata.extend_from_slice(&global);
            let record = wire::record(TYPE_SRV, ttl, &rdata);
            let set = Rrset::new([(NO_CLUSTER, record.as_slice())]);
            self.table.insert(
                self.zone.len(),
                name,
                Node::Static(Box::new([(TYPE_SRV, set)])),
            );
        }
        Ok(())
    }

    fn service_node(&self, eps: &[&Ep], strategy: &Strategy, ttl: u32) -> Node {
        Node::Service(ServiceNode {
            v4: self.addr_set(eps, false, strategy, ttl).map(Box::new),
            v6: self.addr_set(eps, true, strategy, ttl).map(Box::new),
        })
    }

    fn addr_set(&self, eps: &[&Ep], v6: bool, strategy: &Strategy, ttl: u32) -> Option<AddrSet> {
        let family = |ip: &IpAddr| ip.is_ipv6() == v6;
        let fam: Vec<&Ep> = eps.iter().copied().filter(|e| family(&e.address)).collect();
        if fam.is_empty() {
            return None;
        }
        let set = |members: &[&Ep]| {
            let records: Vec<(u16, Vec<u8>)> = members
                .iter()
                .map(|e| (e.cluster, wire::address_record(e.address, ttl)))
                .collect();
            Rrset::new(records.iter().map(|(c, r)| (*c, r.as_slice())))
        };
        let pick = match strategy {
            Strategy::RoundRobin => Pick::Rotate(set(&fam)),
            Strategy::Failover { primary_region } => {
                let primary: Vec<&Ep> = fam
                    .iter()
                    .copied()
                    .filter(|e| e.region == Some(primary_region.as_str()))
                    .collect();
                Pick::Rotate(set(if primary.is_empty() { &fam } else { &primary }))
            }
            Strategy::Geo => self.geo_pick(&fam, &set),
            Strategy::Weighted { weights } => {
                let mut total = 0u32;
                let mut groups = Vec::new();
                for weight in weights.iter().filter(|w| w.weight > 0) {
                    let members: Vec<&Ep> = fam
                        .iter()
                        .copied()
                        .filter(|e| {
                            (weight.region.is_some() || weight.cluster.is_some())
                                && weight.region.as_deref().is_none_or(|r| e.region == Some(r))
                                && weight
                                    .cluster
                                    .as_deref()
                                    .is_none_or(|c| e.cluster_name == c)
                        })
                        .collect();
                    if !members.is_empty() {
                        total = total.saturating_add(weight.weight);
                        groups.push((total, set(&members)));
                    }
                }
                if groups.is_empty() {
                    Pick::Rotate(set(&fam))
                } else {
                    Pick::Weighted {
                        total,
                        groups: groups.into_boxed_slice(),
                    }
                }
            }
        };
        let mut local = Vec::new();
        let mut clusters: Vec<u16> = eps.iter().map(|e| e.cluster).collect();
        clusters.sort_unstable();
        clusters.dedup();
        for cluster in clusters
            .into_iter()
            .filter(|&c| self.clusters.has_networks[c as usize])
        {
            let mut records: Vec<Vec<u8>> = Vec::new();
            for e in eps.iter().filter(|e| e.cluster == cluster) {
                let ip = e
                    .cluster_ip
                    .filter(family)
                    .or(Some(e.address).filter(family));
                if let Some(ip) = ip {
                    let record = wire::address_record(ip, ttl);
                    if !records.contains(&record) {
                        records.push(record);
                    }
                }
            }
            if !records.is_empty() {
                local.push((
                    cluster,
                    Rrset::new(records.iter().map(|r| (cluster, r.as_slice()))),
                ));
            }
        }
        Some(AddrSet {
            pick,
            local: local.into_boxed_slice(),
        })
    }

    /// For each region of the geo table, the nearest region that has endpoints here.
    fn geo_pick(&self, fam: &[&Ep], set: &dyn Fn(&[&Ep]) -> Rrset) -> Pick {
        let mut candidates: Vec<&str> = fam.iter().filter_map(|e| e.region).collect();
        candidates.sort_unstable();
        candidates.dedup();
        let sets: Vec<Rrset> = candidates
            .iter()
            .map(|r| {
                set(&fam
                    .iter()
                    .copied()
                    .filter(|e| e.region == Some(*r))
                    .collect::<Vec<_>>())
            })
            .collect();
        let by_region = self
            .geo
            .regions()
            .map(|from| {
                let nearest = self.geo.nearest(from, &candidates);
                match nearest.first() {
                    Some(first) if self.geo.distance(from, first) < UNKNOWN_DISTANCE => candidates
                        .iter()
                        .position(|c| c == first)
                        .map_or(u16::MAX, |i| i as u16),
                    _ => u16::MAX,
                }
            })
            .collect();
        Pick::Geo {
            by_region,
            sets: sets.into_boxed_slice(),
            default: set(fam),
        }
    }
}

fn cname(target: &[u8], ttl: u32) -> Node {
    Node::Cname {
        target: target.into(),
        record: wire::record(TYPE_CNAME, ttl, target).into_boxed_slice(),
    }
}
