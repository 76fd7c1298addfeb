//! The conformance suite's fast half: one test per cause the upstream API-machinery suite found
//! on the hub (`scripts/conformance` runs the upstream suite itself), each through the real
//! `flotilla serve` binary with kubectl or raw requests. A module per area.

#[path = "../common/mod.rs"]
mod common;

mod access_reviews;
mod admission_policy;
mod apiservices;
mod bootstrap;
mod crds;
mod flowcontrol;
mod kinds;
mod lists;
mod quota;
mod support;
mod writes;
