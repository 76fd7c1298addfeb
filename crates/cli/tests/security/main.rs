//! The bad-input and authorization suite: every hole of the security review, driven through the
//! real `flotilla serve` binary (and real members where delivery is involved). Each case failed
//! before its fix; a module per area, so the cases of one area stay together.

#[path = "../common/mod.rs"]
mod common;

mod authz;
mod credentials;
mod fleet;
mod input;
mod postgres;
