//! Placement: filter, score, select, assign.
//!
//! The scheduler decides which member clusters a `ResourceBinding` goes to and how many replicas
//! each one runs. Only the last step exists so far: [`assign`], the pure replica apportionment
//! (no I/O, no API types), so it can be tested against reference tables and benchmarked alone.
//! The filter, score and select plugins, and the mapping from the `policy.flotilla.io` types onto
//! [`assign::Target`], come later.
#![deny(missing_docs)]

pub mod assign;
pub mod error;

pub use error::{Error, Result};
