//! The loops a member's agent runs once it has joined, the same for a pull agent (inside the
//! member) and a push worker (in the hub): Work delivery, service exports, health probes and the
//! heartbeat; a pull agent also renews its own credential ([`pull`]).

use kube::Client;

use crate::hub_watch::HubWatches;
use crate::join::{self, StateDir};
use crate::{delivery, export, heartbeat, probe, Result};

/// How a joined agent's loops run.
#[derive(Clone, Debug, Default)]
pub struct Loops {
    /// The Lease and the Cluster's status.
    pub beat: heartbeat::Options,
    /// Works into the member, their status back.
    pub delivery: delivery::Options,
    /// The member's votes on the fleet's service endpoints (a push member's come from the hub).
    pub probe: probe::Options,
    /// How the loops watch the hub.
    pub watches: HubWatches,
}

/// Runs the loops of `cluster` with `hub` and `member` until one ends: the heartbeat's error
/// (e.g. the hub revoked the agent) is returned, the other loops run until dropped.
pub async fn run(hub: Client, member: Client, cluster: &str, loops: Loops) -> Result<()> {
    tokio::select! {
        _ = delivery::Delivery::run(hub.clone(), member.clone(), cluster, loops.delivery, &loops.watches) => Ok(()),
        _ = export::run(hub.clone(), member.clone(), cluster, &loops.watches) => Ok(()),
        _ = probe::run(hub.clone(), cluster, loops.probe, &loops.watches) => Ok(()),
        r = heartbeat::run(hub, member, cluster, loops.beat) => r,
    }
}

/// [`run`] for a pull agent that joined as `cluster` (its credential in `state`, `hub` made
/// from it), renewing that credential too; `flotilla agent` and `flotilla sim --mode pull` run
/// this.
pub async fn pull(
    hub: Client,
    member: Client,
    cluster: &str,
    state: &StateDir,
    loops: Loops,
) -> Result<()> {
    tokio::select! {
        r = run(hub.clone(), member, cluster, loops) => r,
        r = join::renew_tokens(hub, cluster, state) => r,
    }
}
