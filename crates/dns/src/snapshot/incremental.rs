//! [`SnapshotBuilder`]: a snapshot kept current from successive fleets, at the cost of what changed.
//!
//! The builder remembers, per service, a fingerprint of its definition and the names it added.
//! Given a new fleet it takes out the names of services that went or changed, adds those that
//! came or changed, and leaves every other name, and every shard holding only such names, as it
//! was (shared with the previous snapshot). The result equals a full [`Snapshot::build`] of the
//! new fleet. When that could depend on the order of services (two services wanting one name, or
//! endpoints naming clusters the fleet does not list) or the clusters changed, it builds in full.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use super::build::{self, Builder, Clusters, Table};
use super::{Snapshot, SnapshotOptions};
use crate::fleet::{ClusterInfo, Fleet, FleetService, Strategy};
use crate::geo::GeoTable;
use crate::hash::FastBuild;
use crate::Result;

/// Builds snapshots of one zone from successive fleets, redoing only the services that changed.
#[derive(Debug)]
pub struct SnapshotBuilder {
    zone: String,
    geo: GeoTable,
    options: SnapshotOptions,
    state: Option<State>,
}

/// What the last build left behind.
struct State {
    last: Snapshot,
    table: Table,
    clusters: Clusters,
    /// Fingerprint of the fleet's clusters.
    clusters_key: u64,
    /// Services by a hash of namespace and name.
    services: HashMap<u64, Known, FastBuild>,
    /// Counts builds, to find the services a new fleet no longer has.
    epoch: u32,
    /// Whether the result could depend on the order of services: every change builds in full.
    full_only: bool,
    /// A hash of every service's key and fingerprint in fleet order.
    order: u64,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("services", &self.services.len())
            .field("full_only", &self.full_only)
            .finish_non_exhaustive()
    }
}

/// A service as last built.
struct Known {
    fingerprint: u64,
    epoch: u32,
    /// Its data names (see `Table::log`).
    names: Box<[u8]>,
}

impl SnapshotBuilder {
    /// A builder for `zone`; fails if the zone or the options cannot make a snapshot.
    pub fn new(zone: &str, geo: GeoTable, options: SnapshotOptions) -> Result<SnapshotBuilder> {
        build::zone_wire(zone)?;
        Snapshot::build(zone, &Fleet::default(), &geo, &options)?;
        Ok(SnapshotBuilder {
            zone: zone.to_string(),
            geo,
            options,
            state: None,
        })
    }

    /// The snapshot of `fleet`, or `None` when it holds nothing new since the last call (the
    /// first call always builds). Errors leave the builder as if the call had not happened but
    /// the next call builds in full.
    pub fn update(&mut self, fleet: &Fleet) -> Result<Option<Snapshot>> {
        match self.try_incremental(&fleet.clusters, &fleet.services)? {
            Outcome::Done(snapshot) => Ok(snapshot.map(|s| *s)),
            Outcome::Full(key) => {
                let services: Vec<&FleetService> = fleet.services.iter().collect();
                self.full(&fleet.clusters, services, key).map(Some)
            }
        }
    }

    /// [`SnapshotBuilder::update`] taking the fleet: a full build drops each service once it is
    /// added, so the fleet and the new snapshot are not both whole in memory at once.
    pub fn update_owned(&mut self, fleet: Fleet) -> Result<Option<Snapshot>> {
        let Fleet { clusters, services } = fleet;
        match self.try_incremental(&clusters, &services)? {
            Outcome::Done(snapshot) => Ok(snapshot.map(|s| *s)),
            Outcome::Full(key) => self.full(&clusters, services, key).map(Some),
        }
    }

    /// The update without a full build, if it can do without one.
    fn try_incremental(
        &mut self,
        clusters: &[ClusterInfo],
        services: &[FleetService],
    ) -> Result<Outcome> {
        let clusters_key = clusters_key(clusters);
        let Some(mut state) = self.state.take() else {
            return Ok(Outcome::Full(clusters_key));
        };
        if state.clusters_key != clusters_key {
            return Ok(Outcome::Full(clusters_key));
        }
        let Some(diff) = diff(&mut state, services) else {
            return Ok(Outcome::Full(clusters_key));
        };
        if diff.changed.is_empty() && diff.removed.is_empty() && diff.order == state.order {
            self.state = Some(state);
            return Ok(Outcome::Done(None));
        }
        if state.full_only {
            return Ok(Outcome::Full(clusters_key));
        }
        state.order = diff.order;
        Ok(match self.apply(state, &diff)? {
            Some(snapshot) => Outcome::Done(Some(Box::new(snapshot))),
            None => Outcome::Full(clusters_key),
        })
    }

    /// Builds everything and remembers it.
    fn full<S: std::borrow::Borrow<FleetService>>(
        &mut self,
        clusters: &[ClusterInfo],
        fleet: Vec<S>,
        clusters_key: u64,
    ) -> Result<Snapshot> {
        let count = fleet.len();
        let mut services = HashMap::<u64, Known, FastBuild>::default();
        services.reserve(count);
        let mut repeated = false;
        let mut order = DefaultHasher::new();
        let (snapshot, builder) = build::full(
            &self.zone,
            clusters,
            fleet,
            &self.geo,
            &self.options,
            &mut |service, names| {
                let known = Known {
                    fingerprint: fingerprint(service),
                    epoch: 0,
                    names: names.into(),
                };
                (key(service), known.fingerprint).hash(&mut order);
                repeated |= services.insert(key(service), known).is_some();
            },
        )?;
        let full_only = repeated || builder.table.conflict || builder.clusters_grew;
        tracing::debug!(zone = %self.zone, services = count, full_only,
                        "DNS snapshot built in full");
        self.state = Some(State {
            last: snapshot.clone(),
            table: builder.table,
            clusters: builder.clusters,
            clusters_key,
            services,
            epoch: 0,
            full_only,
            order: order.finish(),
        });
        Ok(snapshot)
    }

    /// Applies `diff` to `state`; `None` when a full build must decide instead.
    fn apply(&mut self, mut state: State, diff: &Diff<'_>) -> Result<Option<Snapshot>> {
        let zone = state.last.zone.to_vec();
        let mut builder = Builder::new(
            zone.clone(),
            &self.geo,
            &self.options,
            std::mem::take(&mut state.table),
            std::mem::take(&mut state.clusters),
        )?;
        for known in &diff.removed {
            builder.table.remove(&zone, &known.names);
        }
        for (service, _) in &diff.changed {
            if let Some(known) = state.services.get(&key(service)) {
                builder.table.remove(&zone, &known.names);
            }
        }
        for &(service, fingerprint) in &diff.changed {
            builder.add(service);
            if builder.table.conflict || builder.clusters_grew {
                return Ok(None);
            }
            let known = Known {
                fingerprint,
                epoch: state.epoch,
                names: builder.table.log.as_slice().into(),
            };
            state.services.insert(key(service), known);
        }
        let mut last = state.last;
        let serial = build::serial(&self.options);
        if serial != last.serial {
            let (apex, soa_negative, _) = build::apex(&self.zone, &self.options, serial)?;
            builder
                .table
                .names
                .shard_mut(&zone)
                .insert(zone.clone().into_boxed_slice(), apex);
            last.soa_negative = soa_negative;
            last.serial = serial;
        }
        last.names = builder.table.names.clone();
        tracing::debug!(zone = %self.zone, changed = diff.changed.len(),
                        removed = diff.removed.len(), "DNS snapshot updated");
        state.last = last.clone();
        state.table = builder.table;
        state.clusters = builder.clusters;
        self.state = Some(state);
        Ok(Some(last))
    }
}

/// What [`SnapshotBuilder::try_incremental`] came to: a result, or that a full build must decide
/// (with the clusters' fingerprint).
enum Outcome {
    Done(Option<Box<Snapshot>>),
    Full(u64),
}

/// Services of a new fleet that are new or changed (with their fingerprints), and the services
/// it no longer has.
struct Diff<'f> {
    changed: Vec<(&'f FleetService, u64)>,
    removed: Vec<Known>,
    /// See [`State::order`].
    order: u64,
}

/// Compares `fleet` with what `state` knows; `None` if a service appears twice.
fn diff<'f>(state: &mut State, services: &'f [FleetService]) -> Option<Diff<'f>> {
    state.epoch = state.epoch.wrapping_add(1);
    let epoch = state.epoch;
    let mut changed = Vec::new();
    let mut added = HashMap::<u64, (), FastBuild>::default();
    let mut order = DefaultHasher::new();
    for service in services {
        let key = key(service);
        let fingerprint = fingerprint(service);
        (key, fingerprint).hash(&mut order);
        match state.services.get_mut(&key) {
            Some(known) if known.epoch == epoch => return None,
            Some(known) => {
                known.epoch = epoch;
                if known.fingerprint != fingerprint {
                    changed.push((service, fingerprint));
                }
            }
            None => {
                if added.insert(key, ()).is_some() {
                    return None;
                }
                changed.push((service, fingerprint));
            }
        }
    }
    let gone: Vec<u64> = state
        .services
        .iter()
        .filter(|(_, known)| known.epoch != epoch)
        .map(|(&key, _)| key)
        .collect();
    let removed = gone
        .iter()
        .filter_map(|key| state.services.remove(key))
        .collect();
    Some(Diff {
        changed,
        removed,
        order: order.finish(),
    })
}

/// A service's identity: a hash of its namespace and name.
fn key(service: &FleetService) -> u64 {
    let mut h = DefaultHasher::new();
    service.namespace.hash(&mut h);
    service.name.hash(&mut h);
    h.finish()
}

/// A hash of everything a service's names and answers depend on.
fn fingerprint(service: &FleetService) -> u64 {
    let mut h = DefaultHasher::new();
    service.namespace.hash(&mut h);
    service.name.hash(&mut h);
    service.ttl.hash(&mut h);
    match &service.strategy {
        Strategy::RoundRobin => 0u8.hash(&mut h),
        Strategy::Failover { primary_region } => {
            1u8.hash(&mut h);
            primary_region.hash(&mut h);
        }
        Strategy::Geo => 2u8.hash(&mut h),
        Strategy::Weighted { weights } => {
            3u8.hash(&mut h);
            weights.len().hash(&mut h);
            for weight in weights {
                weight.region.hash(&mut h);
                weight.cluster.hash(&mut h);
                weight.weight.hash(&mut h);
            }
        }
    }
    service.ports.len().hash(&mut h);
    for port in &service.ports {
        port.name.hash(&mut h);
        port.protocol.hash(&mut h);
        port.port.hash(&mut h);
    }
    service.endpoints.len().hash(&mut h);
    for endpoint in &service.endpoints {
        endpoint.cluster.hash(&mut h);
        endpoint.region.hash(&mut h);
        endpoint.address.hash(&mut h);
        endpoint.verdict.hash(&mut h);
        endpoint.cluster_ip.hash(&mut h);
    }
    h.finish()
}

/// A hash of the fleet's clusters (their order gives their indices).
fn clusters_key(clusters: &[ClusterInfo]) -> u64 {
    let mut h = DefaultHasher::new();
    clusters.len().hash(&mut h);
    for cluster in clusters {
        cluster.name.hash(&mut h);
        cluster.region.hash(&mut h);
        cluster.networks.hash(&mut h);
    }
    h.finish()
}
