//! Applies Work into member clusters.
//!
//! The [`Applier`] is the part the pull agent (inside a member) and the push workers (in the hub)
//! share: given a client for the member and a [`Work`](flotilla_apis::work::v1alpha1::Work), it
//! writes every manifest as the Work's `applyStrategy` and `conflictPolicy` say, and returns one
//! [`ManifestResult`] per manifest that maps onto the Work's `ManifestStatus`. It never writes
//! the Work itself: reporting status back to the hub is the caller's job.
//!
//! * [`manifest`]: pure helpers (no I/O): identifying, ordering and stripping manifests.
//! * [`discovery`]: resolving a manifest's kind to the member's API resource, cached.
//! * [`apply`]: the [`Applier`] and its write strategies.
//! * [`prune`]: removing (or orphaning) objects that left the Work.
//! * [`status`]: the Work's status from the apply results: health, feedback, conditions (pure).
//! * [`delivery`]: the loop that keeps a member in step with its Works on the hub.
//! * [`export`]: mirroring the member's EndpointSlices of exported Services to the hub (MCS).
//! * [`probe`]: voting on the health of the fleet's service endpoints (HealthReport status).
//! * [`heartbeat`]: the member's Lease and Cluster status on the hub.
//! * [`loops`]: the loops above, run together by a joined agent or push worker.
//! * [`push`]: the hub's workers for Push clusters, running the same loop.
//! * [`join`]: asking to join (pull mode) and keeping the agent's own credential.
//! * [`client`]: clients multiplexing their requests over HTTP/2 (one connection per server).
#![deny(missing_docs)]

pub mod apply;
pub mod client;
pub mod delivery;
pub mod discovery;
mod error;
pub mod export;
pub mod heartbeat;
pub mod hub_watch;
pub mod join;
pub mod loops;
pub mod manifest;
pub mod outcome;
pub mod probe;
pub mod prune;
pub mod push;
mod queue;
pub mod status;

pub use apply::Applier;
pub use error::{Error, Result};
pub use outcome::ManifestResult;
pub use prune::{PruneAction, PruneResult};
