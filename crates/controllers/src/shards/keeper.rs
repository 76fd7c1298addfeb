//! One held shard's keeper: renews its Lease every [`RENEW_EVERY`] from the Lease as this
//! process last wrote it, on its own, so a slow answer for one shard (or for the round's list)
//! holds back no other renewal.

use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use kube::Api;
use tokio::time::Instant;

use super::state::State;
use super::writes::{renew, SAFETY};
use super::{LEASE_DURATION, RENEW_EVERY};
use crate::metrics::metrics;

/// Keeps the holding `epoch` of `shard`, taken by a write sent at about `until` less the
/// Lease's working time, for as long as it lasts.
pub(super) async fn keep(
    api: Api<Lease>,
    state: Arc<State>,
    shard: u32,
    epoch: u64,
    until: Instant,
) {
    let mut sent = until - (LEASE_DURATION - SAFETY);
    loop {
        tokio::time::sleep_until(sent + RENEW_EVERY).await;
        let Some((deadline, lease)) = state.holding(shard, epoch) else {
            return;
        };
        sent = Instant::now();
        match renew(&api, lease, &state.identity, deadline).await {
            Ok(Some((lease, until))) => {
                if !state.extend(shard, epoch, lease, until) {
                    return;
                }
            }
            Ok(None) => {
                if state.drop_shard(shard, Some(epoch)).is_some() {
                    metrics().shard_transition(&state.identity, "lost");
                    tracing::warn!(shard, "another process took the shard");
                    state.publish();
                }
                return;
            }
            Err(e) => tracing::warn!(shard, error = %e, "renewing a shard Lease"),
        }
    }
}
