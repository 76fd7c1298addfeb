//! Building a [`Snapshot`] from a [`Fleet`]: names, empty non-terminals and each strategy's choices.
//!
//! The [`Builder`] adds one service at a time and remembers what it takes to take one out again
//! (the names each service added, how many names lie below each name), so that
//! [`super::SnapshotBuilder`] can redo only the services that changed.

mod service;

use std::borrow::Borrow;
use std::collections::HashMap;
use std::net::IpAddr;

use tracing::warn;

use super::names::Names;
use super::rrset::NO_CLUSTER;
use super::{Node, Rrset, Snapshot, SnapshotOptions};
use crate::fleet::{ClusterInfo, Fleet, FleetService};
use crate::geo::{ip_bits, GeoTable};
use crate::hash::FastBuild;
use crate::wire::{self, TYPE_NS, TYPE_SOA};
use crate::{Error, Result};

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
