//! The commands that manage the fleet through the hub: `token`, `cluster`, `join`, and the pull
//! `agent` itself. Each talks to the hub with `--kubeconfig` or `KUBECONFIG` like kubectl does.

pub mod agent;
mod client;
pub mod cluster;
pub mod explain;
pub mod join;
pub mod token;

pub use client::{hub_client, parse_duration};
