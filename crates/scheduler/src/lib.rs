//! Placement: filter, score, select, assign.
//!
//! The scheduler decides which member clusters a `ResourceBinding` goes to and how many replicas
//! each one runs. [`framework::schedule`] is the entry point: a pure function from the binding's
//! placement and the registered clusters to a [`framework::Decision`] that explains itself per
//! cluster ([`explain::render`] prints it for `flotilla explain placement`). Each step has its
//! own module, in the order the framework runs them:
//! 1. [`filter`]: plugins that may refuse a cluster, each with a reason;
//! 2. [`score`]: how much a feasible cluster is preferred;
//! 3. [`select`]: `spreadConstraints` choose among the feasible clusters;
//! 4. [`assign`]: how many replicas each selected cluster runs, by [`assign::apportion`] (the
//!    pure Webster arithmetic, also used directly for Job and HPA splits).
//!
//! [`failover`] builds eviction and failback on top of [`schedule`].
#![deny(missing_docs)]

pub mod assign;
pub mod error;
pub mod explain;
pub mod failover;
pub mod filter;
pub mod framework;
pub mod quantity;
pub mod score;
pub mod select;
#[cfg(test)]
mod testing;

pub use assign::available_replicas;
pub use error::{Error, Result};
pub use framework::{schedule, ClusterVerdict, Decision, Eviction, Outcome, Request};
