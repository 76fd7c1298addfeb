//! The suites' view of `flotilla_testkit`: [`Hub`] is the testkit's hub-in-a-test running the
//! `flotilla` binary Cargo built for this test build (so no suite can run a stale binary found
//! elsewhere), and the kubectl helpers are re-exported as they are.
#![allow(dead_code)]

pub mod fleet;

use std::ops::{Deref, DerefMut};

// Each suite uses some of these; the rest are unused there.
#[allow(unused_imports)]
pub use flotilla_testkit::kubectl::{
    cm, json, k, k_err, k_in, k_in_err, kubectl_bin, names, versioned_kubectl,
};

/// The `flotilla` binary under test.
pub const FLOTILLA: &str = env!("CARGO_BIN_EXE_flotilla");

/// A running hub of [`FLOTILLA`]: everything of [`flotilla_testkit::hub::Hub`] (kubectl, log,
/// stop, restart), stopped when dropped.
pub struct Hub(flotilla_testkit::hub::Hub);

impl Hub {
    /// Start a hub on SQLite.
    pub fn start() -> Hub {
        Self::start_with(&[])
    }

    /// Start a hub with extra `serve` arguments.
    pub fn start_with(extra: &[&str]) -> Hub {
        Hub(flotilla_testkit::hub::Hub::start(
            std::path::Path::new(FLOTILLA),
            extra,
        ))
    }
}

impl Deref for Hub {
    type Target = flotilla_testkit::hub::Hub;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Hub {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}
