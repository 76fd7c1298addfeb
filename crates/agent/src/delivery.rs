//! Delivery: keeps one member in step with the Works in its execution namespace on the hub.
//!
//! The same loop runs in the pull agent (inside the member, dialling out to the hub) and in the
//! hub's push workers (dialling in to the member); only the clients differ.
//!
//! * A watch on the hub's Works in `flotilla-es-<cluster>` (and nothing else) feeds a
//!   de-duplicating [`Queue`]; workers reconcile one Work at a time each ([`reconcile`]). A
//!   Work is queued when it is new or its spec, deletion or finalizers changed ([`triggers`]),
//!   not for a change of its status: the status is this loop's own writing, and answering each
//!   of its writes with a reconcile applied every Work several times over.
//! * Watches on the member, one per resource flotilla wrote there and filtered by flotilla's
//!   managed label, queue the owning Work whenever one of its objects changes ([`watches`]).
//!   A status change so reaches the Work's status within moments, and a change someone made to a
//!   field flotilla manages is put back by the re-apply that follows — without polling.
//! * Every Work is also re-queued periodically, as a safety net for events lost in an outage.
//!
//! Both clients' watches resume from the last resourceVersion and back off on errors
//! (kube-runtime's watcher); a reconcile that fails is retried with exponential backoff.

mod reconcile;
mod reported;
mod triggers;
mod watches;

use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::names::execution_namespace;
use flotilla_apis::work::v1alpha1::Work;
use flotilla_watch::Packed;
use futures::StreamExt;
use kube::runtime::WatchStreamExt;
use kube::Client;

use crate::hub_watch::HubWatches;
use crate::queue::Queue;
use crate::Applier;
use triggers::Triggers;

/// How a [`Delivery`] runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// Works reconciled at the same time.
    pub workers: usize,
    /// Every Work is reconciled at least this often, whatever the watches say.
    pub resync: Duration,
    /// Longest wait before retrying a Work that failed.
    pub max_backoff: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            workers: 8,
            resync: Duration::from_secs(300),
            max_backoff: Duration::from_secs(30),
        }
    }
}

/// The Work loop of one member.
pub struct Delivery {
    pub(crate) hub: Client,
    pub(crate) namespace: String,
    pub(crate) applier: Arc<Applier>,
    pub(crate) queue: Queue,
    /// The Works of the namespace, as JSON text: a member's share of the fleet's manifests is
    /// most of what a push worker holds, and parsed objects cost several times their text.
    pub(crate) works: Packed<Work>,
    pub(crate) options: Options,
    pub(crate) watches: watches::Watches,
    pub(crate) failures: parking_lot::Mutex<std::collections::HashMap<String, u32>>,
    /// What each Work was last queued for.
    triggers: Triggers,
    /// The status last written to each Work, until the watch shows it.
    reported: reported::Reported,
}

// === impl Delivery ===

impl Delivery {
    /// Runs the loop for `cluster` until the returned future is dropped: Works are read from
    /// `hub`, applied to `member`.
    pub async fn run(
        hub: Client,
        member: Client,
        cluster: &str,
        options: Options,
        watches: &HubWatches,
    ) {
        let namespace = execution_namespace(cluster);
        let queue = Queue::default();
        let delivery = Arc::new(Delivery {
            hub: hub.clone(),
            namespace: namespace.clone(),
            applier: Arc::new(Applier::new(member.clone())),
            watches: watches::Watches::new(member, namespace.clone(), queue.clone()),
            queue: queue.clone(),
            works: Packed::default(),
            options,
            failures: Default::default(),
            triggers: Default::default(),
            reported: Default::default(),
        });
        let feed = {
            let d = delivery.clone();
            // Kept lean: a Work's managedFields mirror its whole manifest, twice (the binding
            // controller's apply, the status writers'), and delivery reads none of them.
            watches
                .works(&hub, &namespace)
                .modify(flotilla_watch::lean::<Work>)
                .for_each(move |event| {
                    match event {
                        Ok(event) => {
                            d.works.apply(&event);
                            d.saw(&event);
                            if let Some(name) = d.triggers.triggered(&event) {
                                d.queue.add(&name);
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "watching Works on the hub"),
                    }
                    futures::future::ready(())
                })
        };
        let resync = {
            let d = delivery.clone();
            async move {
                let mut tick = tokio::time::interval(d.options.resync);
                tick.tick().await;
                loop {
                    tick.tick().await;
                    for (_, name) in d.works.keys() {
                        let settled = d
                            .works
                            .get(Some(&d.namespace), &name)
                            .is_some_and(|w| d.watches.passes_resync(&w));
                        if !settled {
                            d.queue.add(&name);
                        }
                    }
                }
            }
        };
        let workers = futures::future::join_all(
            (0..delivery.options.workers.max(1)).map(|_| delivery.clone().work()),
        );
        tracing::info!(%namespace, "delivering Works");
        tokio::select! {
            _ = feed => {},
            _ = resync => {},
            _ = workers => {},
        }
    }

    /// One worker: reconciles queued Works until dropped.
    async fn work(self: Arc<Self>) {
        loop {
            let name = self.queue.next().await;
            // Boxed: a reconcile's state is large and lives only while it runs, and a hub's
            // push workers keep eight idle workers for each of a thousand members.
            let outcome = Box::pin(self.reconcile(&name)).await;
            self.queue.done(&name);
            match outcome {
                Ok(reconcile::Next::Idle) => {
                    self.failures.lock().remove(&name);
                }
                Ok(reconcile::Next::After(delay)) => {
                    self.failures.lock().remove(&name);
                    self.queue.add_after(&name, delay);
                }
                Err(e) => {
                    let delay = self.backoff(&name);
                    tracing::warn!(work = %name, error = %e, retry_in = ?delay, "reconciling a Work failed");
                    self.queue.add_after(&name, delay);
                }
            }
        }
    }

    /// Tells [`reported`] what the watch of Works shows.
    fn saw(&self, event: &kube::runtime::watcher::Event<Work>) {
        use kube::runtime::watcher::Event;
        match event {
            Event::Apply(w) | Event::InitApply(w) => self.reported.seen(
                w.metadata.name.as_deref().unwrap_or_default(),
                w.metadata.resource_version.as_deref(),
            ),
            Event::Delete(w) => self
                .reported
                .seen(w.metadata.name.as_deref().unwrap_or_default(), None),
            Event::Init => self.reported.relisted(),
            Event::InitDone => {}
        }
    }

    /// 1 s, 2 s, 4 s, ... up to `max_backoff`, per Work.
    fn backoff(&self, name: &str) -> Duration {
        let mut failures = self.failures.lock();
        let n = failures.entry(name.to_owned()).or_default();
        *n = n.saturating_add(1);
        let secs = 1u64 << (*n - 1).min(16);
        Duration::from_secs(secs).min(self.options.max_backoff)
    }
}
