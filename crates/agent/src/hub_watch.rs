//! What a member's loops watch on the hub, all in the member's execution namespace: its Works,
//! its export requests, the EndpointSlices it mirrored there, its HealthReport.
//!
//! A pull agent watches them itself ([`HubWatches::Own`]): a watch each, in that namespace
//! only, which is all its credential may read. The hub's push workers, a thousand of them in
//! one process, share one watch of each kind across the fleet ([`HubWatches::Shared`]), each
//! worker reading its own namespace of it.

use std::fmt;
use std::sync::Arc;

use flotilla_apis::multicluster::{ServiceExport, SERVICE_NAMESPACE_LABEL, SOURCE_CLUSTER_LABEL};
use flotilla_apis::networking::v1alpha1::{HealthReport, HEALTH_REPORT_NAME};
use flotilla_apis::work::v1alpha1::Work;
use flotilla_watch::{Events, Fanout};
use futures::StreamExt;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client};

/// How a member's loops watch the hub.
#[derive(Clone, Default)]
pub enum HubWatches {
    /// A watch of each kind in the member's execution namespace (a pull agent).
    #[default]
    Own,
    /// One watch of each kind for all members (the hub's push workers).
    Shared(Arc<Shared>),
}

impl fmt::Debug for HubWatches {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Own => "Own",
            Self::Shared(_) => "Shared",
        })
    }
}

/// The shared watches of [`HubWatches::Shared`]; each starts with its first reader.
pub struct Shared {
    works: Fanout<Work>,
    requests: Fanout<ServiceExport>,
    copies: Fanout<EndpointSlice>,
    health: Fanout<HealthReport>,
}

impl Shared {
    /// The shared watches of `hub`'s Works, export requests, mirrored EndpointSlices (every
    /// member's: in a member's execution namespace only its own are kept) and HealthReports.
    pub fn new(hub: Client) -> Self {
        Self {
            works: Fanout::new(hub.clone(), works()),
            requests: Fanout::new(hub.clone(), requests()),
            copies: Fanout::new(
                hub.clone(),
                watcher::Config::default().labels(SOURCE_CLUSTER_LABEL),
            ),
            health: Fanout::new(hub, health()),
        }
    }
}

fn works() -> watcher::Config {
    watcher::Config::default()
}

fn requests() -> watcher::Config {
    watcher::Config::default().labels(SERVICE_NAMESPACE_LABEL)
}

fn health() -> watcher::Config {
    watcher::Config::default().fields(&format!("metadata.name={HEALTH_REPORT_NAME}"))
}

fn own<K>(hub: &Client, ns: &str, config: watcher::Config) -> Events<K>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope>,
    K: Clone + serde::de::DeserializeOwned + fmt::Debug + Send + Sync + 'static,
    K::DynamicType: Default,
{
    watcher(Api::namespaced(hub.clone(), ns), config)
        .default_backoff()
        .boxed()
}

impl HubWatches {
    /// The Works in `ns`.
    pub(crate) fn works(&self, hub: &Client, ns: &str) -> Events<Work> {
        match self {
            Self::Own => own(hub, ns, works()),
            Self::Shared(s) => s.works.subscribe(ns),
        }
    }

    /// The export requests in `ns`.
    pub(crate) fn requests(&self, hub: &Client, ns: &str) -> Events<ServiceExport> {
        match self {
            Self::Own => own(hub, ns, requests()),
            Self::Shared(s) => s.requests.subscribe(ns),
        }
    }

    /// The EndpointSlices `cluster` mirrored into `ns` (another cluster's there are passed
    /// over).
    pub(crate) fn copies(&self, hub: &Client, ns: &str, cluster: &str) -> Events<EndpointSlice> {
        match self {
            Self::Own => own(
                hub,
                ns,
                watcher::Config::default().labels(&format!("{SOURCE_CLUSTER_LABEL}={cluster}")),
            ),
            Self::Shared(s) => {
                let cluster = cluster.to_owned();
                s.copies
                    .subscribe(ns)
                    .filter(move |e| {
                        let theirs = |o: &EndpointSlice| {
                            o.metadata
                                .labels
                                .as_ref()
                                .and_then(|l| l.get(SOURCE_CLUSTER_LABEL))
                                != Some(&cluster)
                        };
                        let keep = !matches!(
                            e,
                            Ok(watcher::Event::Apply(o) | watcher::Event::InitApply(o)) if theirs(o)
                        );
                        futures::future::ready(keep)
                    })
                    .boxed()
            }
        }
    }

    /// The HealthReport in `ns`.
    pub(crate) fn health(&self, hub: &Client, ns: &str) -> Events<HealthReport> {
        match self {
            Self::Own => own(hub, ns, health()),
            Self::Shared(s) => s.health.subscribe(ns),
        }
    }
}
