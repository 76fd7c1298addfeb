//! The agent's side of multi-cluster services (KEP-1645): mirroring the member's EndpointSlices
//! of exported Services to the hub. The pull agent runs it; for a push member, the hub's push
//! worker does.
//!
//! The hub's MCS controller writes an export request into this cluster's execution namespace
//! for every exported Service the cluster runs: a `ServiceExport` named `<ns>.<name>`,
//! labelled [`SERVICE_NAMESPACE_LABEL`] and [`SERVICE_NAME_LABEL`]. For each, the agent keeps
//! a copy, in the same execution namespace on the hub, of every member EndpointSlice of that
//! Service (label `kubernetes.io/service-name`), labelled
//! `multicluster.kubernetes.io/source-cluster=<cluster>`,
//! `multicluster.kubernetes.io/service-name=<name>` and [`SERVICE_NAMESPACE_LABEL`]`=<ns>`
//! ([`mirror`]); a copy whose slice or request is gone is deleted. Slices flotilla delivered
//! from the cluster set (they carry the source-cluster label) are never mirrored back.
//!
//! It works from three watches (the requests and the copies on the hub, the member's slices)
//! and, after any change, brings the copies in step at once (after a short pause that gathers
//! a burst of changes), and every `resync` regardless.

pub mod mirror;

use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::multicluster::{ServiceExport, MANAGED_BY, MANAGED_BY_LABEL};
use flotilla_apis::names::execution_namespace;
use flotilla_watch::{feed, feed_events};
use futures::FutureExt;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::watcher;
use kube::{Api, Client, Resource, ResourceExt};
use parking_lot::Mutex;
use tokio::sync::Notify;

use self::mirror::{desired, requested, CONTENT_HASH_ANNOTATION, KUBE_SERVICE_NAME_LABEL};
use crate::hub_watch::HubWatches;
use crate::{Error, Result};

/// Field manager of the copies the agent writes on the hub.
pub const MANAGER: &str = "flotilla-agent-export";

/// Timing of the export mirror.
#[derive(Clone, Debug)]
pub struct Options {
    /// The pause after a change, gathering a burst of changes into one pass.
    pub debounce: Duration,
    /// A full pass at least this often, whatever the watches say.
    pub resync: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            debounce: Duration::from_millis(100),
            resync: Duration::from_secs(30),
        }
    }
}

/// Mirrors `member`'s EndpointSlices of the Services the hub asks `cluster` to export, until
/// dropped.
pub async fn run(hub: Client, member: Client, cluster: &str, watches: &HubWatches) {
    run_with(hub, member, cluster, Options::default(), watches).await
}

/// [`run`] with explicit timing.
pub async fn run_with(
    hub: Client,
    member: Client,
    cluster: &str,
    options: Options,
    watches: &HubWatches,
) {
    let es = execution_namespace(cluster);
    let changed = Arc::new(Notify::new());
    let (requests, request_writer) = reflector::store();
    let (copies, copy_writer) = reflector::store();
    let request_feed = feed_events(watches.requests(&hub, &es), request_writer, changed.clone());
    let copy_feed = feed_events(
        watches.copies(&hub, &es, cluster),
        copy_writer,
        changed.clone(),
    );
    // The member's slices are watched only while the hub asks for some: most members export
    // nothing, and a hub's thousand push workers need not hold a thousand idle member watches.
    let (asking, mut asked) = tokio::sync::watch::channel(false);
    let slices: Arc<Mutex<Option<Store<EndpointSlice>>>> = Arc::default();
    let slice_feed = {
        let (slices, changed) = (slices.clone(), changed.clone());
        async move {
            while asked.wait_for(|a| *a).await.is_ok() {
                let (store, writer) = reflector::store();
                *slices.lock() = Some(store);
                let api = Api::<EndpointSlice>::all(member.clone());
                let config = watcher::Config::default().labels(KUBE_SERVICE_NAME_LABEL);
                tokio::select! {
                    _ = feed(api, config, writer, changed.clone()) => {},
                    _ = asked.wait_for(|a| !*a) => {},
                }
                *slices.lock() = None;
            }
        }
    };
    let passes = async {
        let _ = requests.wait_until_ready().await;
        let _ = copies.wait_until_ready().await;
        let api = Api::<EndpointSlice>::namespaced(hub.clone(), &es);
        loop {
            let asks = !requests.is_empty();
            asking.send_replace(asks);
            let local = slices.lock().clone().filter(|s| {
                s.wait_until_ready()
                    .now_or_never()
                    .is_some_and(|r| r.is_ok())
            });
            // Asked, but the member's slices are not listed yet: nothing is known to be
            // stale, so nothing is deleted; their list wakes the next pass.
            if !asks || local.is_some() {
                let local = local.map(|s| s.state()).unwrap_or_default();
                if let Err(e) = sync(&api, cluster, &es, &requests, &copies, &local).await {
                    tracing::warn!(%cluster, error = %e, "mirroring exported EndpointSlices");
                }
            }
            let _ = tokio::time::timeout(options.resync, changed.notified()).await;
            tokio::time::sleep(options.debounce).await;
        }
    };
    tokio::select! {
        _ = request_feed => {},
        _ = copy_feed => {},
        _ = slice_feed => {},
        _ = passes => {},
    }
}

/// One pass: writes the copies that are missing or changed, deletes those nothing asks for.
async fn sync(
    api: &Api<EndpointSlice>,
    cluster: &str,
    es: &str,
    requests: &Store<ServiceExport>,
    copies: &Store<EndpointSlice>,
    local: &[Arc<EndpointSlice>],
) -> Result<()> {
    let requests = requests.state();
    let asked = requested(requests.iter().map(|r| &**r));
    let wanted = desired(cluster, es, &asked, local.iter().map(|s| &**s));
    for (name, body) in &wanted {
        let hash = body["metadata"]["annotations"][CONTENT_HASH_ANNOTATION].as_str();
        let current = copies.get(&ObjectRef::new(name).within(es));
        if current.is_some_and(|c| {
            c.annotations()
                .get(CONTENT_HASH_ANNOTATION)
                .map(String::as_str)
                == hash
        }) {
            continue;
        }
        tracing::debug!(%cluster, slice = %name, "mirroring an EndpointSlice to the hub");
        api.patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(body),
        )
        .await
        .map_err(|source| Error::Hub {
            action: format!("writing EndpointSlice {es}/{name}"),
            source,
        })?;
    }
    for copy in copies.state() {
        let name = copy.name_any();
        let ours = copy.labels().get(MANAGED_BY_LABEL).map(String::as_str) == Some(MANAGED_BY);
        if !ours || wanted.contains_key(&name) || copy.meta().deletion_timestamp.is_some() {
            continue;
        }
        tracing::debug!(%cluster, slice = %name, "removing a mirrored EndpointSlice from the hub");
        match api.delete(&name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(source) => {
                return Err(Error::Hub {
                    action: format!("deleting EndpointSlice {es}/{name}"),
                    source,
                })
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
