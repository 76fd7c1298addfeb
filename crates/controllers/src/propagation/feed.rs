//! Watch feeds for the propagation controllers: a watcher that fills a reflector store and,
//! optionally, says "something changed" ([`Changes`]) to the controllers that reconcile
//! everything on it; [`shared_controller`], a kube-runtime controller over a store shared
//! through an [`Informer`] (the bindings, read by four controllers, are held once); and
//! [`requeue_at`], how a reconciler asks to look again at a given time.
//!
//! Every store drops `metadata.managedFields` ([`lean`]): no controller reads them, and with
//! several field managers per binding and Work they are a large part of each object.

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use flotilla_watch::Informer;
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::controller::{self, Action};
use kube::runtime::reflector::store::Writer;
use kube::runtime::{watcher, Controller, WatchStreamExt};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::broadcast;

use super::settled::Epoch;
use crate::shards::Shards;

/// "Something every binding depends on changed": an [`Epoch`] bumped first (part of the
/// bindings' settled inputs), then a wake-up for the controllers that reconcile everything.
#[derive(Clone)]
pub struct Changes {
    tx: broadcast::Sender<()>,
    epoch: Arc<Epoch>,
}

impl Default for Changes {
    fn default() -> Self {
        Self {
            tx: broadcast::channel(64).0,
            epoch: Arc::default(),
        }
    }
}

impl Changes {
    pub fn notify(&self) {
        self.bump();
        let _ = self.tx.send(());
    }

    /// Bumps the epoch only: the settled inputs of every binding are stale, but nothing is
    /// reconciled for it; the caller wakes what depends on the change itself.
    pub fn bump(&self) {
        self.epoch.bump();
    }

    pub fn subscribe(&self) -> broadcast::Receiver<()> {
        self.tx.subscribe()
    }

    /// The wake-ups as a stream, for `Controller::reconcile_all_on`.
    pub fn stream(&self) -> impl futures::Stream<Item = ()> + Send + 'static {
        tokio_stream::wrappers::BroadcastStream::new(self.subscribe()).map(|_| ())
    }

    /// The epoch now; read it before the stores it covers.
    pub fn epoch(&self) -> u64 {
        self.epoch.get()
    }
}

/// Keeps `writer`'s store filled from `api` (with backoff), telling `notify` after every
/// event; runs until dropped.
pub async fn feed<K>(api: Api<K>, writer: Writer<K>, notify: Option<Changes>)
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(lean::<K>)
        .reflect(writer)
        .for_each(|_| {
            if let Some(n) = &notify {
                n.notify();
            }
            futures::future::ready(())
        })
        .await;
}

/// What [`feed_on_change`] saw of an object, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seen<'a> {
    /// The first sight of this name (each object of the first list, then each one created).
    New(&'a str),
    /// An object seen before whose digest changed.
    Changed(&'a str),
}

/// As [`feed`], but calls `on_change` only when `digest` of an object (by name) changes: the
/// part of it the listening controllers depend on; `trim` takes from each object what they do
/// not read (at least [`lean`]).
pub async fn feed_on_change<K>(
    api: Api<K>,
    writer: Writer<K>,
    mut on_change: impl FnMut(Seen<'_>),
    digest: impl Fn(&K) -> u64,
    trim: fn(&mut K),
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    let mut seen: std::collections::HashMap<String, u64> = std::collections::HashMap::new();
    watcher(api, watcher::Config::default())
        .default_backoff()
        .modify(trim)
        .reflect(writer)
        .applied_objects()
        .for_each(|o| {
            if let Ok(o) = o {
                let d = digest(&o);
                let name = o.meta().name.as_deref().unwrap_or_default();
                match seen.insert(name.to_owned(), d) {
                    None => on_change(Seen::New(name)),
                    Some(before) if before != d => on_change(Seen::Changed(name)),
                    Some(_) => {}
                }
            }
            futures::future::ready(())
        })
        .await;
}

pub use flotilla_watch::lean;

/// How many objects a propagation controller reconciles at once. Bounded, as
/// kube-controller-manager's and Karmada's controllers run a few workers each: a backlog (ten
/// thousand templates created faster than they propagate) then waits as queue entries of a
/// few hundred bytes, not as that many reconciles in flight, each holding its object parsed
/// and its requests (heaptrack found about 30 MB of them with 10,000 bindings waiting, and
/// the allocator keeps what a burst took). 32 keeps the hub's group commits full.
pub const CONCURRENCY: u16 = 32;

/// A kube-runtime controller over the objects of a shared [`Informer`] (reconciling each one
/// applied, at most [`CONCURRENCY`] at once), which reconciles every object again when this
/// process gains a shard (its reconciler skips the objects of shards it does not own).
pub fn shared_controller<K>(informer: &Informer<K>, shards: &Shards) -> Controller<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync + Unpin,
{
    Controller::for_shared_stream(informer.applied(), informer.store())
        .with_config(controller::Config::default().concurrency(CONCURRENCY))
        .reconcile_all_on(shards.gained())
}

/// Look again at `at` (a little after, so a deadline has passed when the reconciler runs
/// again; at once when `at` is past), or on the next change when `None`.
pub fn requeue_at(at: Option<Timestamp>, now: Timestamp) -> Action {
    match at {
        Some(t) => {
            let secs = t.duration_since(now).as_secs_f64().max(0.0);
            Action::requeue(Duration::from_secs_f64(secs) + Duration::from_millis(200))
        }
        None => Action::await_change(),
    }
}
