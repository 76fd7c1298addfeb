//! Placement: filter, score, select, assign.
//!
//! The scheduler decides which member clusters a `ResourceBinding` goes to and how many replicas
//! each one runs. [`framework::schedule`] is the entry point: a pure function from the binding's
//! placement and the registered clusters to a [`framework::Decision`] that explains itself per
//! cluster ([`explain::render`] prints it for `flotilla explain placement`). The steps live in
//! their own modules: [`filter`] (plugins with reasons), `spread` (select), `place` (mapping the
//! policy onto [`assign`], the pure replica apportionment).
#![deny(missing_docs)]

pub mod assign;
pub mod error;
pub mod explain;
pub mod failover;
pub mod filter;
pub mod framework;
mod place;
pub mod quantity;
pub mod score;
mod select;
#[cfg(test)]
mod testing;

pub use error::{Error, Result};
pub use framework::{schedule, ClusterVerdict, Decision, Eviction, Outcome, Request};
pub use place::available_replicas;
