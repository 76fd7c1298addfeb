//! Multi-cluster services (KEP-1645, `multicluster.x-k8s.io`): from a `ServiceExport` on the
//! hub to a `ServiceImport` and the cluster set's EndpointSlices in every member of the
//! namespace.
//!
//! A user creates `ServiceExport` `ns/name` beside the Service `ns/name` that a policy
//! propagates. The clusters running the Service (its ResourceBinding's) are the exporting
//! clusters. For each, the controller writes an export request into the cluster's execution
//! namespace: a `ServiceExport` named `<ns>.<name>` labelled
//! `multicluster.flotilla.io/service-namespace=<ns>` and
//! `multicluster.kubernetes.io/service-name=<name>` (the agent may read ServiceExports there
//! and nowhere else). The cluster's agent answers with copies of its EndpointSlices of the
//! Service in the same namespace ([`flotilla_agent::export`](../../flotilla_agent/export/index.html)),
//! labelled with their source cluster.
//!
//! From those the controller builds ([`plan`]): the hub's `ServiceImport` `ns/name` (the
//! Service's ports, `Headless` or `ClusterSetIP`, `status.clusters` the exporting clusters;
//! owned by the export), the export's conditions `Valid` and `Conflict` (the clusters' rendered
//! Services disagree on ports or headlessness; the import follows the hub's Service), and for
//! every member of the namespace (a cluster one of its bindings reaches) a Work
//! `<ns>.<name>.mcs` with the ServiceImport and every exporting cluster's slices (named
//! `<cluster>.<slice>`, labelled `multicluster.kubernetes.io/source-cluster` and
//! `service-name`, without `kubernetes.io/service-name` so neither kube-proxy's view of the
//! member's own Service nor the agent's export picks them up). The ServiceImport CRD reaches
//! those members first, in a Work `serviceimports.mcs` that orphans it when it goes. Work
//! names ending in `.mcs` never collide with a binding's (`<ns>.<name>-<kind>`).
//!
//! The controller keeps stores of what it reads and, after any change, recomputes every
//! export at once (after a short pause gathering a burst), and every 30 s regardless. Of the
//! Works it keeps its own and the Services' (the rest of a fleet's Works are not its business)
//! and reads the bindings from the process's shared informer, woken only when a binding's
//! placement changes, so the status writes of thousands of workloads neither wake it nor take
//! room in stores of its own.

pub mod plan;
mod write;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::multicluster::{ServiceExport, ServiceImport, SOURCE_CLUSTER_LABEL};
use flotilla_apis::work::v1alpha1::{Manifest, ResourceBinding, Work};
use flotilla_watch::{feed, feed_part, Change, Compact, Informer, Part};
use futures::stream::BoxStream;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use kube::{Api, Client, ResourceExt};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::Notify;

use self::plan::Placed;
use crate::propagation::binding::{unpack, Bindings};
use crate::propagation::workload::fnv64;

/// Field manager of the MCS controller's writes.
pub const MANAGER: &str = "flotilla-mcs";
/// Label of the Works the MCS controller writes.
pub const IMPORT_WORK_LABEL: &str = "multicluster.flotilla.io/import";
/// The Work that delivers the ServiceImport CRD to a member.
pub const CRD_WORK: &str = "serviceimports.mcs";
/// Annotation of a Work or request the controller writes: a hash of its content.
pub const CONTENT_HASH_ANNOTATION: &str = "multicluster.flotilla.io/content-hash";

/// The Work that delivers the import of Service `ns`/`name` to a member.
pub fn import_work_name(ns: &str, name: &str) -> String {
    format!("{ns}.{name}.mcs")
}

/// What the controller reads, kept current by watches.
struct Stores {
    exports: Store<ServiceExport>,
    imports: Store<ServiceImport>,
    services: Store<Service>,
    placements: Placements,
    slices: Store<EndpointSlice>,
    works: Store<Work>,
}

/// Runs until dropped; reads the bindings from the process's shared informer.
pub async fn run(hub: Client, shared: Bindings) {
    let changed = Arc::new(Notify::new());
    let (exports, ew) = reflector::store();
    let (imports, iw) = reflector::store();
    let (services, sw) = reflector::store();
    let informer = shared.of::<ResourceBinding>().clone();
    let placements = Placements::default();
    let (slices, lw) = reflector::store();
    let (works, ww) = reflector::store();
    let all = watcher::Config::default;
    let stores = Stores {
        exports,
        imports,
        services,
        placements: placements.clone(),
        slices,
        works,
    };
    let passes = async {
        let _ = stores.exports.wait_until_ready().await;
        let _ = stores.imports.wait_until_ready().await;
        let _ = stores.services.wait_until_ready().await;
        placements.fill(&informer).await;
        let _ = stores.slices.wait_until_ready().await;
        let _ = stores.works.wait_until_ready().await;
        loop {
            write::pass(&hub, &stores).await;
            let _ = tokio::time::timeout(Duration::from_secs(30), changed.notified()).await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    let c = || changed.clone();
    tokio::select! {
        _ = feed(Api::<ServiceExport>::all(hub.clone()), all(), ew, c()) => {},
        _ = feed(Api::<ServiceImport>::all(hub.clone()), all(), iw, c()) => {},
        _ = feed(Api::<Service>::all(hub.clone()), all(), sw, c()) => {},
        _ = placements.follow(informer.subscribe(), c()) => {},
        _ = feed(Api::<EndpointSlice>::all(hub.clone()), all().labels(SOURCE_CLUSTER_LABEL), lw, c()) => {},
        _ = feed_part(Api::<Work>::all(hub.clone()), all(), ww, c(), service_works()) => {},
        _ = passes => {},
    }
}

/// Where each binding puts its object ([`Placed`]), kept from the shared informer's changes:
/// a pass reads every binding of a namespace, and parsing each one it is given is the
/// informer's to do once per change, not the pass's per export. Clones share it.
#[derive(Clone, Default)]
struct Placements(Arc<Mutex<HashMap<Key, Placed>>>);

/// A binding's namespace and name.
type Key = (Option<String>, String);

impl Placements {
    /// Every binding stored, once the informer has listed them (before the first pass).
    async fn fill(&self, informer: &Informer<Compact<ResourceBinding>>) {
        let store = informer.store();
        let _ = store.wait_until_ready().await;
        let mut map = self.0.lock();
        for kept in store.state() {
            if let Ok(b) = unpack(&kept) {
                map.insert(key(&*b), Placed::of(&b));
            }
        }
    }

    /// Keeps up with `changes`, waking `changed` when where a binding puts its object
    /// changes, so the status writes of thousands of workloads do not.
    async fn follow(
        &self,
        mut changes: BoxStream<'static, Change<Compact<ResourceBinding>>>,
        changed: Arc<Notify>,
    ) {
        while let Some(change) = changes.next().await {
            let wake = match change {
                Change::Applied(kept) => match unpack(&kept) {
                    Ok(b) => {
                        let placed = Placed::of(&b);
                        let mut map = self.0.lock();
                        let key = key(&*b);
                        map.get(&key) != Some(&placed) && {
                            map.insert(key, placed);
                            true
                        }
                    }
                    Err(_) => false,
                },
                Change::Deleted(kept) => self.0.lock().remove(&key(&*kept)).is_some(),
            };
            if wake {
                changed.notify_one();
            }
        }
    }

    /// Every binding's placement now.
    fn snapshot(&self) -> Vec<Placed> {
        self.0.lock().values().cloned().collect()
    }
}

fn key(b: &impl ResourceExt) -> Key {
    (b.namespace(), b.name_any())
}

/// Of the Works, this controller's own and those of Services (their rendered Services are
/// compared across clusters), without their status.
fn service_works() -> Part<Work> {
    Part {
        keep: |w| {
            w.labels().contains_key(IMPORT_WORK_LABEL)
                || w.spec.manifests.first().is_some_and(Manifest::is_service)
        },
        trim: |w| w.status = None,
        digest: |w| {
            let hash = w.annotations().get(CONTENT_HASH_ANNOTATION);
            let gone = w.metadata.deletion_timestamp.is_some();
            fnv64(json!([hash, gone, w.spec.manifests]).to_string().as_bytes())
        },
    }
}

#[cfg(test)]
mod tests;
