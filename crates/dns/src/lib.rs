//! Authoritative DNS for multi-cluster services (issue 13).
//!
//! The crate is pure: it knows nothing of Kubernetes. A caller (the hub's DNS controller, or a static
//! JSON file) fills a [`fleet::Fleet`]; [`snapshot::Snapshot::build`] turns it into pre-encoded answers;
//! a [`snapshot::SnapshotHandle`] swaps snapshots atomically; [`server::Server`] answers UDP and TCP
//! queries from whatever snapshot the handle holds, never touching anything slower per query.
//!
//! - [`fleet`]: the input model (clusters, services, endpoints, verdicts, strategies).
//! - [`verdict`]: the quorum rule that turns health votes into a [`fleet::Verdict`].
//! - [`geo`]: CIDR → region table and region distances for the `Geo` strategy.
//! - [`snapshot`]: the immutable answer table and its handle.
//! - [`zones`]: several zones on one server, each question to the longest zone containing it.
//! - [`server`]: the UDP/TCP server and its counters.
#![deny(missing_docs)]

pub mod fleet;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod geo;
mod hash;
mod respond;
pub mod server;
pub mod snapshot;
pub mod verdict;
mod wire;
pub mod zones;

use std::net::SocketAddr;

/// Errors of the DNS crate, named after the step that failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A line of a geo file could not be read.
    #[error("geo table line {line}: {message}")]
    ParseGeo {
        /// 1-based line number.
        line: usize,
        /// What was wrong with it.
        message: String,
    },
    /// The zone name is not a valid DNS name.
    #[error("zone {zone:?}: {message}")]
    InvalidZone {
        /// The zone as given.
        zone: String,
        /// Why it was refused.
        message: String,
    },
    /// A name built from the fleet (service, namespace, region, cluster, port) is not a valid DNS name.
    #[error("name {name:?}: {message}")]
    InvalidName {
        /// The name as built.
        name: String,
        /// Why it was refused.
        message: String,
    },
    /// Binding a server socket failed.
    #[error("bind {protocol} {addr}: {source}")]
    Bind {
        /// `udp` or `tcp`.
        protocol: &'static str,
        /// The address asked for.
        addr: SocketAddr,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Accepting TCP connections failed.
    #[error("accept tcp: {0}")]
    Accept(#[source] std::io::Error),
    /// A UDP worker thread could not be started.
    #[error("start udp worker: {0}")]
    SpawnWorker(#[source] std::io::Error),
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
