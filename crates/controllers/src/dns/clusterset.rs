//! The `clusterset.local` zone of multi-cluster services (KEP-1645): keeps a second
//! [`SnapshotHandle`] current from the hub's ServiceImports and the EndpointSlice copies the
//! exporting clusters' agents write there, so the DNS server answers
//! `<svc>.<ns>.svc.clusterset.local` beside the fleet zone, on the same sockets
//! ([`flotilla_dns::zones::Zones`]).
//!
//! Like [`super::source`], it only reads the hub, so it runs inside `serve` and in every
//! `flotilla dns` process. What is answered is the pure [`answers::clusterset_fleet`]; a change
//! is gathered for a few milliseconds, and a snapshot is built and swapped only when the fleet
//! differs. Until both watches have listed once, the handle keeps what it had (the apex only at
//! first).

pub mod answers;

use std::sync::Arc;

use flotilla_apis::multicluster::{ServiceImport, SOURCE_CLUSTER_LABEL};
use flotilla_dns::geo::GeoTable;
use flotilla_dns::snapshot::{Snapshot, SnapshotHandle, SnapshotOptions};
use futures::StreamExt;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::{self, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client};
use tokio::sync::Notify;

pub use answers::{clusterset_fleet, CLUSTERSET_TTL};

use super::watch::{feed, lean, DEBOUNCE};
use crate::{Error, Result};

/// The zone of multi-cluster services by default (KEP-1645).
pub const DEFAULT_ZONE: &str = "clusterset.local";

/// The label between a Service's `<svc>.<ns>` and the zone: `<svc>.<ns>.svc.clusterset.local`.
pub const SERVICE_LABEL: &str = "svc";

/// Snapshot settings of a clusterset zone: names `<svc>.<ns>.svc.<zone>`, no per-region or
/// per-cluster names, negative answers cached for [`CLUSTERSET_TTL`].
pub fn snapshot_options() -> SnapshotOptions {
    SnapshotOptions {
        service_suffix: Some(SERVICE_LABEL.into()),
        scoped_names: false,
        negative_ttl: CLUSTERSET_TTL,
        ..SnapshotOptions::default()
    }
}

/// The clusterset zone with its apex only (SOA and NS at `zone`), answered until the hub is read.
pub fn empty(zone: &str) -> Result<Snapshot> {
    build(zone, &Default::default(), &snapshot_options())
}

fn build(
    zone: &str,
    fleet: &flotilla_dns::fleet::Fleet,
    options: &SnapshotOptions,
) -> Result<Snapshot> {
    Snapshot::build(zone, fleet, &GeoTable::default(), options).map_err(|source| Error::Snapshot {
        zone: zone.to_string(),
        source,
    })
}

/// Keeps `handle` answering the hub's multi-cluster services in `zone` (e.g.
/// [`DEFAULT_ZONE`]); runs until dropped (returns `Ok` only if a watch ended). Fails at once if
/// the zone cannot be served.
pub async fn run(hub: Client, zone: &str, handle: SnapshotHandle) -> Result<()> {
    let options = snapshot_options();
    empty(zone)?;
    let changed = Arc::new(Notify::new());
    let (imports, iw) = reflector::store::<ServiceImport>();
    let (slices, sw) = reflector::store::<EndpointSlice>();
    let feeds = async {
        tokio::join!(
            feed(
                Api::<ServiceImport>::all(hub.clone()),
                iw,
                lean,
                changed.clone()
            ),
            feed_slices(Api::<EndpointSlice>::all(hub.clone()), sw, changed.clone()),
        );
    };
    let rebuild = async {
        if imports.wait_until_ready().await.is_err() || slices.wait_until_ready().await.is_err() {
            return;
        }
        let mut last = None;
        loop {
            let fleet = current(&imports, &slices);
            if last.as_ref() != Some(&fleet) {
                match build(zone, &fleet, &options) {
                    Ok(snapshot) => {
                        tracing::debug!(%zone, services = fleet.services.len(), "clusterset DNS snapshot");
                        handle.store(snapshot);
                        last = Some(fleet);
                    }
                    Err(e) => {
                        tracing::warn!(%zone, error = %e, "cannot build the clusterset DNS snapshot")
                    }
                }
            }
            // a change during the build left a permit: the next wait returns at once
            changed.notified().await;
            tokio::time::sleep(DEBOUNCE).await;
        }
    };
    tokio::select! {
        _ = feeds => {},
        _ = rebuild => {},
    }
    Ok(())
}

fn current(
    imports: &Store<ServiceImport>,
    slices: &Store<EndpointSlice>,
) -> flotilla_dns::fleet::Fleet {
    let imports = imports.state();
    let slices = slices.state();
    clusterset_fleet(imports.iter().map(|i| &**i), slices.iter().map(|s| &**s))
}

/// The hub's EndpointSlices that carry a source cluster (the agents' copies), kept lean.
async fn feed_slices(
    api: Api<EndpointSlice>,
    writer: reflector::store::Writer<EndpointSlice>,
    changed: Arc<Notify>,
) {
    watcher(api, watcher::Config::default().labels(SOURCE_CLUSTER_LABEL))
        .default_backoff()
        .modify(lean)
        .reflect(writer)
        .for_each(|_| {
            changed.notify_one();
            futures::future::ready(())
        })
        .await;
}

#[cfg(test)]
mod tests;
