//! The DNS server's source: keeps a [`SnapshotHandle`] current from the hub's watches. It only
//! reads the hub, so it runs inside `serve` and in every `flotilla dns` process alike.
//!
//! On every change (gathered for a few milliseconds) and every second (reports go stale with
//! time alone), it reads the stores into a [`super::fleet::World`], makes the
//! [`Fleet`](flotilla_dns::fleet::Fleet) ([`fleet_of`]) and, only when that differs from the
//! last one, builds a new snapshot and swaps it in. Until the watches have listed everything
//! once, the handle keeps what it had (an empty zone at first), so a restart never answers
//! NXDOMAIN for names it merely has not read yet.

use std::sync::Arc;
use std::time::Duration;

use flotilla_dns::geo::GeoTable;
use flotilla_dns::snapshot::{SnapshotBuilder, SnapshotHandle, SnapshotOptions};
use k8s_openapi::jiff::Timestamp;
use kube::Client;
use tokio::sync::Notify;

use super::fleet::fleet_of;
use super::watch::{watch, DEBOUNCE};
use crate::{Error, Result};

/// How often the fleet is recomputed without any change (freshness ages with time).
const EVERY: Duration = Duration::from_secs(1);

/// What the source answers for.
#[derive(Clone, Debug)]
pub struct SourceOptions {
    /// The zone (no trailing dot), e.g. `fleet.example.com`.
    pub zone: String,
    /// Regions of client networks, for the Geo strategy.
    pub geo: GeoTable,
    /// SOA/NS settings of the snapshots.
    pub snapshot: SnapshotOptions,
}

impl SourceOptions {
    /// Options for `zone` with an empty geo table and default SOA/NS settings.
    pub fn new(zone: impl Into<String>) -> Self {
        Self {
            zone: zone.into(),
            geo: GeoTable::default(),
            snapshot: SnapshotOptions::default(),
        }
    }
}

/// Keeps `handle` answering the hub's fleet for `options.zone`; runs until dropped (returns
/// `Ok` only if every watch ended). Fails at once if the zone cannot be served.
pub async fn run(hub: Client, options: SourceOptions, handle: SnapshotHandle) -> Result<()> {
    // A zone the snapshot builder refuses is the caller's mistake: say so now, not per change.
    let mut builder =
        SnapshotBuilder::new(&options.zone, options.geo.clone(), options.snapshot.clone())
            .map_err(|source| Error::Snapshot {
                zone: options.zone.clone(),
                source,
            })?;
    let changed = Arc::new(Notify::new());
    let (stores, feeds) = watch(&hub, changed.clone());
    let rebuild = async {
        if !stores.ready().await {
            return;
        }
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = changed.notified() => tokio::time::sleep(DEBOUNCE).await,
                _ = tick.tick() => {}
            }
            let fleet = fleet_of(&stores.world(), Timestamp::now());
            // Only the services that changed since the last fleet are redone; `None`: none did.
            match builder.update(&fleet) {
                Ok(Some(snapshot)) => {
                    tracing::debug!(zone = %options.zone, services = fleet.services.len(), "DNS snapshot");
                    handle.store(snapshot);
                }
                Ok(None) => {}
                // Keep answering the last good snapshot; the next change is tried again.
                Err(e) => {
                    tracing::warn!(zone = %options.zone, error = %e, "cannot build the DNS snapshot")
                }
            }
        }
    };
    tokio::select! {
        _ = feeds => {},
        _ = rebuild => {},
    }
    Ok(())
}
