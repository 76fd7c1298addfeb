//! flotilla's controllers: ordinary clients of the hub API (through kube-rs), never reaching
//! into storage, so they run in the hub process by default or anywhere else.
//!
//! * [`registry`]: approving and removing member clusters (used by `flotilla cluster` and by
//!   the joining controller).
//! * [`joining`]: marks new join requests pending approval, or approves them (`--auto-approve`).
//! * [`tokens`]: deletes expired bootstrap tokens.
//! * [`namespace_defaults`]: the ServiceAccount `default` and ConfigMap `kube-root-ca.crt` in
//!   every namespace, as kube-controller-manager keeps them.
//! * [`health`]: turns Lease heartbeats into the Clusters' `Ready` condition and taints.
//! * [`render`]: a template rendered into one member cluster's manifest (hub fields stripped,
//!   replica share set, override rules applied); pure functions for the binding→Work controller.
//! * [`propagation`]: the detector (objects × policies → bindings), the scheduler controller,
//!   and the binding controller (bindings → Works, Works' status → binding and template).
//! * [`mcs`]: multi-cluster services: ServiceExports to ServiceImports and the cluster set's
//!   EndpointSlices in the members (KEP-1645).
//! * [`dns`]: global DNS for federated Services: the fleet and its verdicts from the voters'
//!   reports, the DNS server's snapshot source, and the controller writing probe targets,
//!   GlobalService status and DNSEndpoints.
//! * [`shards`]: the work divided into shards, each worked by the process holding its Lease,
//!   so any number of controller processes share it.
#![deny(missing_docs)]

pub mod dns;
mod error;
pub mod fence;
pub mod health;
pub mod joining;
pub mod mcs;
pub mod metrics;
pub mod namespace_defaults;
pub mod propagation;
pub mod registry;
pub mod render;
pub mod shards;
pub mod tokens;

pub use error::{Error, Result};
