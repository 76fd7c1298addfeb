//! Global DNS for federated Services: the hub's side of `flotilla-dns`.
//!
//! * [`fleet`]: the one pure function from the hub's objects (Clusters, Services, their
//!   ResourceBindings, GlobalServices, the voters' HealthReports) and the time to the
//!   endpoints' verdicts ([`fleet::judge`]) and the [`Fleet`](flotilla_dns::fleet::Fleet) the
//!   DNS server answers from ([`fleet::fleet_of`]).
//! * [`source`]: read-only; keeps a DNS server's snapshot current from the hub's watches
//!   (inside `serve --dns-listen`, or in a `flotilla dns` process near users).
//! * [`clusterset`]: read-only too; keeps the `clusterset.local` snapshot of multi-cluster
//!   services (ServiceImports and the exporting clusters' EndpointSlices) current.
//! * [`controller`]: the writer, inside the hub's controllers when a zone is configured: the
//!   voters' probe targets, GlobalService status, the fail-open Event and metrics, and
//!   `DNSEndpoint`s for external-dns.
//!
//! Both halves read the same watches ([`watch`](self)) and judge with the same function, so
//! what the status says is what the server answers.

pub mod clusterset;
pub mod controller;
pub mod fleet;
pub mod source;
mod watch;

pub use controller::ControllerOptions;
pub use source::SourceOptions;
