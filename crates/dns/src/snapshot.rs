//! The answer snapshot: every name of the zone with its records pre-encoded, immutable once built.
//!
//! [`Snapshot::build`] does all the work a query could share: names are lowercased wire bytes in a
//! hash map, records are encoded without their owner (see `wire`), each strategy's choices are
//! computed ahead (the Failover set, each client region's Geo set, the Weighted groups, each member's
//! local-first records). A query then costs a map lookup, at most a couple of client-address lookups
//! and a few copies. [`SnapshotHandle`] swaps snapshots atomically so a verdict change is visible to
//! the next query.

mod build;
mod incremental;
mod names;
mod rrset;
#[cfg(test)]
mod tests;

use std::net::IpAddr;
use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::geo::GeoTable;
pub use incremental::SnapshotBuilder;
use names::Names;
pub(crate) use rrset::Rrset;

/// Settings of a snapshot that do not come from the fleet.
#[derive(Clone, Debug)]
pub struct SnapshotOptions {
    /// Name server of the zone (SOA MNAME and the apex NS target); default `ns1.<zone>`.
    pub ns_name: Option<String>,
    /// Addresses of the name server, answered as glue when it is inside the zone.
    pub ns_addresses: Vec<IpAddr>,
    /// SOA RNAME (the mailbox as a name); default `hostmaster.<zone>`.
    pub hostmaster: Option<String>,
    /// TTL of the SOA and NS records.
    pub soa_ttl: u32,
    /// SOA MINIMUM: how long resolvers cache NXDOMAIN/NODATA; keep it short, services come and go.
    pub negative_ttl: u32,
    /// SOA serial; default: seconds since the epoch at build time.
    pub serial: Option<u32>,
    /// Label(s) between a service and the zone: `Some("svc")` names services
    /// `<svc>.<ns>.svc.<zone>` (MCS `clusterset.local`); default none.
    pub service_suffix: Option<String>,
    /// Whether `<svc>.<ns>.<region>` and `<svc>.<ns>.<cluster>` names are built; default true.
    pub scoped_names: bool,
}

impl Default for SnapshotOptions {
    fn default() -> Self {
        SnapshotOptions {
            ns_name: None,
            ns_addresses: Vec::new(),
            hostmaster: None,
            soa_ttl: 3600,
            negative_ttl: crate::fleet::DEFAULT_TTL,
            serial: None,
            service_suffix: None,
            scoped_names: true,
        }
    }
}

/// Pre-encoded answers for one zone. Build with [`Snapshot::build`] or [`Snapshot::empty`], or
/// keep one current change by change with a [`SnapshotBuilder`].
#[derive(Clone, Debug)]
pub struct Snapshot {
    pub(crate) zone: Box<[u8]>,
    zone_text: String,
    pub(crate) names: Names,
    /// The SOA record (without owner) with the negative TTL, for the authority section.
    pub(crate) soa_negative: Box<[u8]>,
    /// A/AAAA of the in-zone name server, added to apex NS answers (empty when none).
    pub(crate) glue: Rrset,
    /// Member networks, longest prefix first: (address bits, width, prefix length, cluster index).
    pub(crate) local_nets: Vec<(u128, u8, u8, u16)>,
    /// Client regions by the geo table; its region indices are the snapshot's.
    pub(crate) geo: GeoTable,
    serial: u32,
}

/// What a name holds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    /// The name exists (it has names below it) but holds no records.
    Empty,
    /// Fixed record sets by type (apex SOA and NS, glue, SRV).
    Static(Box<[(u16, Rrset)]>),
    /// A service name: A/AAAA chosen per query.
    Service(ServiceNode),
    /// An alias to a wider name (a region or cluster without healthy endpoints).
    Cname {
        /// Lowercased wire name of the target.
        target: Box<[u8]>,
        /// The CNAME record without owner (its RDATA is the full target name).
        record: Box<[u8]>,
    },
}

/// A/AAAA answers of a service name (each family boxed: most names have one family only).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ServiceNode {
    pub(crate) v4: Option<Box<AddrSet>>,
    pub(crate) v6: Option<Box<AddrSet>>,
}

/// The addresses of one family at one name.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct AddrSet {
    pub(crate) pick: Pick,
    /// Local-first records per member cluster whose networks are known: (cluster, its records).
    pub(crate) local: Box<[(u16, Rrset)]>,
}

/// How the records of an [`AddrSet`] are chosen per query.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Pick {
    /// All of them, rotated per query.
    Rotate(Rrset),
    /// One group per query with probability weight/total, rotated.
    Weighted {
        total: u32,
        groups: Box<[(u32, Rrset)]>,
    },
    /// The set for the client's region (index into `sets`, by region index), else `default`.
    Geo {
        by_region: Box<[u16]>,
        sets: Box<[Rrset]>,
        default: Rrset,
    },
}

impl Snapshot {
    /// A snapshot with only the apex (SOA, NS): lets a server answer before the first fleet arrives.
    pub fn empty(zone: &str) -> crate::Result<Snapshot> {
        Snapshot::build(
            zone,
            &crate::fleet::Fleet::default(),
            &GeoTable::default(),
            &SnapshotOptions::default(),
        )
    }

    /// The zone, as given when built.
    pub fn zone(&self) -> &str {
        &self.zone_text
    }

    /// The SOA serial.
    pub fn serial(&self) -> u32 {
        self.serial
    }

    /// Number of names (including empty non-terminals) the snapshot holds.
    pub fn name_count(&self) -> usize {
        self.names.len()
    }

    /// Whether a (case-insensitive, dotted) name exists in the zone.
    pub fn contains(&self, name: &str) -> bool {
        crate::wire::name_to_wire(name).is_ok_and(|wire| self.names.contains_key(wire.as_slice()))
    }
}

/// Holds the current snapshot; cheap to clone, all clones see the same one.
#[derive(Clone, Debug)]
pub struct SnapshotHandle {
    current: Arc<ArcSwap<Snapshot>>,
}

impl SnapshotHandle {
    /// A handle holding `snapshot`.
    pub fn new(snapshot: Snapshot) -> SnapshotHandle {
        SnapshotHandle {
            current: Arc::new(ArcSwap::from_pointee(snapshot)),
        }
    }

    /// Replaces the snapshot atomically; queries already running finish on the old one.
    pub fn store(&self, snapshot: Snapshot) {
        self.current.store(Arc::new(snapshot));
    }

    /// The current snapshot.
    pub fn load(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// The current snapshot without touching its reference count (for the query path).
    pub(crate) fn guard(&self) -> arc_swap::Guard<Arc<Snapshot>> {
        self.current.load()
    }
}
