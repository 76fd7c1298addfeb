//! The watches both halves of DNS read: Clusters, Services, ResourceBindings, GlobalServices
//! and HealthReports (all namespaces), each kept in a reflector store, with a signal on every
//! change so a [`World`] can be rebuilt a few milliseconds later.
//!
//! Stores keep objects lean: no managedFields or annotations anywhere; bindings of other kinds
//! than v1 Service are not kept (nor wake anyone), and Services of other types than
//! LoadBalancer are kept as empty shells (their content is never read here, and 10,000 of
//! them would otherwise be held whole).

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::networking::v1alpha1::{GlobalService, HealthReport};
use flotilla_apis::work::v1alpha1::ResourceBinding;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{Service, ServiceSpec};
use kube::runtime::reflector::{self, store::Writer, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;

use super::fleet::World;

/// How long a burst of changes is gathered before the world is read again: short, since a
/// verdict change must reach the answers within 100 ms.
pub(super) const DEBOUNCE: Duration = Duration::from_millis(5);

/// The stores the DNS source and controller read.
#[derive(Clone)]
pub(super) struct Stores {
    clusters: Store<Cluster>,
    services: Store<Service>,
    bindings: Store<ResourceBinding>,
    global_services: Store<GlobalService>,
    reports: Store<HealthReport>,
}

impl Stores {
    /// Waits until every store has its first full list (false: a watch ended).
    pub(super) async fn ready(&self) -> bool {
        self.clusters.wait_until_ready().await.is_ok()
            && self.services.wait_until_ready().await.is_ok()
            && self.bindings.wait_until_ready().await.is_ok()
            && self.global_services.wait_until_ready().await.is_ok()
            && self.reports.wait_until_ready().await.is_ok()
    }

    /// What the stores hold now.
    pub(super) fn world(&self) -> World {
        World {
            clusters: self.clusters.state(),
            services: self.services.state(),
            bindings: self.bindings.state(),
            global_services: self.global_services.state(),
            reports: self.reports.state(),
        }
    }

    /// The HealthReports as stored.
    pub(super) fn reports(&self) -> &Store<HealthReport> {
        &self.reports
    }
}

/// The stores, and the future that keeps them filled (run it beside the reader; it ends only
/// if every watch does). `changed` is notified after every event.
pub(super) fn watch(
    hub: &Client,
    changed: Arc<Notify>,
) -> (Stores, impl std::future::Future<Output = ()>) {
    let (clusters, cw) = reflector::store();
    let (services, sw) = reflector::store();
    let (bindings, bw) = reflector::store();
    let (global_services, gw) = reflector::store();
    let (reports, rw) = reflector::store();
    let feeds = {
        let hub = hub.clone();
        async move {
            tokio::join!(
                feed(
                    Api::<Cluster>::all(hub.clone()),
                    cw,
                    lean_cluster,
                    changed.clone()
                ),
                feed(
                    Api::<Service>::all(hub.clone()),
                    sw,
                    lean_service,
                    changed.clone()
                ),
                flotilla_watch::feed_part(
                    Api::<ResourceBinding>::all(hub.clone()),
                    watcher::Config::default(),
                    bw,
                    changed.clone(),
                    service_bindings(),
                ),
                feed(
                    Api::<GlobalService>::all(hub.clone()),
                    gw,
                    lean,
                    changed.clone()
                ),
                feed(Api::<HealthReport>::all(hub), rw, lean, changed),
            );
        }
    };
    let stores = Stores {
        clusters,
        services,
        bindings,
        global_services,
        reports,
    };
    (stores, feeds)
}

pub(super) async fn feed<K>(
    api: Api<K>,
    writer: Writer<K>,
    modify: fn(&mut K),
    changed: Arc<Notify>,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(modify)
        .reflect(writer)
        .for_each(|_| {
            changed.notify_one();
            futures::future::ready(())
        })
        .await;
}

pub(super) fn lean<K: Resource>(o: &mut K) {
    let meta = o.meta_mut();
    meta.managed_fields = None;
    meta.annotations = None;
}

/// A Cluster as DNS reads it: name, region, networks and conditions.
fn lean_cluster(c: &mut Cluster) {
    lean(c);
    c.forget_inventory();
}

fn lean_service(s: &mut Service) {
    lean(s);
    let load_balancer = s.spec.as_ref().and_then(|s| s.type_.as_deref()) == Some("LoadBalancer");
    if !load_balancer {
        s.spec = Some(ServiceSpec {
            type_: s.spec.as_ref().and_then(|s| s.type_.clone()),
            ..ServiceSpec::default()
        });
        s.status = None;
    }
}

/// Of the bindings, those of v1 Services: the others (most of a fleet's) are neither kept
/// nor wake the world's rebuild with their status writes.
fn service_bindings() -> flotilla_watch::Part<ResourceBinding> {
    flotilla_watch::Part {
        keep: |b| b.spec.resource.is_service(),
        trim: lean,
        // Everything of a Service's binding is read (its placement, its members' status).
        digest: |b| {
            let rv = b.metadata.resource_version.as_deref().unwrap_or_default();
            crate::propagation::workload::fnv64(rv.as_bytes())
        },
    }
}
