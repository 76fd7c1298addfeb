//! The commands that manage the fleet through the hub: `token`, `cluster`, `join`, `explain`,
//! `rollout`, and the pull `agent` itself. Each talks to the hub with `--kubeconfig` or `KUBECONFIG` like kubectl does.

pub mod agent;
pub(crate) mod client;
pub mod cluster;
pub mod explain;
pub mod join;
pub mod rollout;
pub mod token;

pub use client::{hub_client, parse_duration};

/// Refuses a cluster name the hub would refuse (it must make the namespace
/// `flotilla-es-<name>`), in one line, before anything is asked of the hub or the member.
fn check_cluster_name(name: &str) -> anyhow::Result<()> {
    match flotilla_apis::names::cluster_name_error(name) {
        None => Ok(()),
        Some(why) => anyhow::bail!("cluster name {name:?} cannot be used: {why}"),
    }
}
