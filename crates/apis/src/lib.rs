//! flotilla's own API types (cluster, policy, work, networking groups) and their schemas
//!
//! Built in a later issue; the crate exists so the dependency direction is fixed from the start.
#![deny(missing_docs)]
