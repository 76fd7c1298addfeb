//! [`Fanout`]: one watch of a namespaced kind across all namespaces, shared by many readers that
//! each read one namespace.
//!
//! A hub that runs push workers for a thousand members would otherwise hold a thousand watches
//! of each kind the workers read (their Works, export requests, health reports), each with
//! kube-runtime's state and read buffers on the worker's side and a watch's state on the
//! server's. A fanout holds one, and hands each reader the events of its namespace as
//! kube-runtime's watcher would have: `Init`, the namespace's objects, `InitDone`, then every
//! change, in order.
//!
//! A reader that arrives while the shared watch is running lists its namespace itself (one
//! request) and is then fed from the shared watch, skipping what its list already held (events
//! at or below the list's resourceVersion, which the hub numbers in commit order). When the
//! shared watch has to list again (its history expired), every reader gets the new list of its
//! namespace as a fresh `Init`…`InitDone`, so deletions missed meanwhile leave its store too.

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use futures::channel::mpsc;
use futures::stream::BoxStream;
use futures::StreamExt;
use kube::api::ListParams;
use kube::core::NamespaceResourceScope;
use kube::runtime::watcher::{self, watcher, Event};
use kube::runtime::WatchStreamExt;
use kube::{Api, Client, Resource};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use tokio::task::JoinHandle;

/// What a reader gets: the events kube-runtime's watcher would give for its namespace.
pub type Events<K> = BoxStream<'static, watcher::Result<Event<K>>>;

/// How long a reader's list waits before it tries again (it failed, or the shared watch was
/// listing).
const RETRY: (Duration, Duration) = (Duration::from_millis(100), Duration::from_secs(10));

/// One watch of `K` in all namespaces, read per namespace; cheap to clone (clones share it).
/// The watch starts with the first reader and stops when the last clone is dropped.
pub struct Fanout<K: Resource> {
    inner: Arc<Inner<K>>,
}

impl<K: Resource> Clone for Fanout<K> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<K: Resource> {
    client: Client,
    config: watcher::Config,
    state: Arc<Mutex<State<K>>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl<K: Resource> Drop for Inner<K> {
    fn drop(&mut self) {
        if let Some(task) = self.task.get_mut().take() {
            task.abort();
        }
    }
}

struct State<K> {
    next_id: u64,
    readers: HashMap<String, Vec<Reader<K>>>,
    /// The shared watch's list under way (from its `Init` to its `InitDone`); it starts so.
    list: Option<SharedList<K>>,
    /// How many lists the shared watch has finished: a reader whose own list began before
    /// the last one finished lists again.
    lists: u64,
}

struct SharedList<K> {
    /// Readers numbered below this were there when the list began: they get its objects at
    /// its end.
    for_below: u64,
    /// The objects of their namespaces seen so far.
    objects: HashMap<String, Vec<K>>,
}

impl<K> SharedList<K> {
    fn new(for_below: u64) -> Self {
        Self {
            for_below,
            objects: HashMap::new(),
        }
    }
}

struct Reader<K> {
    id: u64,
    /// futures' channel, not tokio's: tokio's keeps room for 32 events from the start (16 KB of
    /// Works), and most readers are idle.
    tx: mpsc::UnboundedSender<watcher::Result<Event<K>>>,
    phase: Phase<K>,
}

enum Phase<K> {
    /// Its own list is under way; the shared watch's changes meanwhile wait here.
    Listing(Vec<Event<K>>),
    /// Fed from the shared watch, skipping changes at or below this resourceVersion.
    Live(Option<u64>),
}

// === impl Fanout ===

impl<K> Fanout<K>
where
    K: Resource<Scope = NamespaceResourceScope> + Clone + DeserializeOwned + Debug + Send + Sync,
    K: 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    /// A fanout of `client`'s `K` that `config` selects (in every namespace).
    pub fn new(client: Client, config: watcher::Config) -> Self {
        Self {
            inner: Arc::new(Inner {
                client,
                config,
                state: Arc::new(Mutex::new(State::new())),
                task: Mutex::new(None),
            }),
        }
    }

    /// The events of `namespace`'s objects, from an `Init` with the ones there now; they end
    /// only when the fanout is dropped. Dropping the stream stops its feed.
    pub fn subscribe(&self, namespace: &str) -> Events<K> {
        let (id, rx) = self.inner.state.lock().add(namespace);
        self.start();
        tokio::spawn(list(
            Api::namespaced(self.inner.client.clone(), namespace),
            params(&self.inner.config),
            self.inner.state.clone(),
            namespace.to_owned(),
            id,
        ));
        rx
    }

    fn start(&self) {
        let mut task = self.inner.task.lock();
        if task.is_none() {
            let api: Api<K> = Api::all(self.inner.client.clone());
            let events = watcher(api, self.inner.config.clone())
                .default_backoff()
                .boxed();
            *task = Some(tokio::spawn(dispatch(events, self.inner.state.clone())));
        }
    }
}

fn params(config: &watcher::Config) -> ListParams {
    ListParams {
        label_selector: config.label_selector.clone(),
        field_selector: config.field_selector.clone(),
        ..ListParams::default()
    }
}

/// Hands the shared watch's events to the readers of their namespaces.
async fn dispatch<K, S>(events: S, state: Arc<Mutex<State<K>>>)
where
    K: Resource + Clone,
    K::DynamicType: Default,
    S: futures::Stream<Item = watcher::Result<Event<K>>> + Unpin,
{
    let mut events = std::pin::pin!(crate::ok_events(events, "shared watch"));
    while let Some(event) = events.next().await {
        state.lock().take(event);
    }
}

// === impl State ===

impl<K: Resource + Clone> State<K> {
    fn new() -> Self {
        Self {
            next_id: 0,
            readers: HashMap::new(),
            list: Some(SharedList::new(0)),
            lists: 0,
        }
    }

    /// A new reader of `ns`, waiting for its list: its number and its events.
    fn add(&mut self, ns: &str) -> (u64, Events<K>)
    where
        K: Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded();
        let id = self.next_id;
        self.next_id += 1;
        let readers = self.readers.entry(ns.to_owned()).or_default();
        readers.retain(|r| !r.tx.is_closed());
        readers.push(Reader {
            id,
            tx,
            phase: Phase::Listing(Vec::new()),
        });
        (id, rx.boxed())
    }

    fn take(&mut self, event: Event<K>) {
        match event {
            Event::Init => self.list = Some(SharedList::new(self.next_id)),
            Event::InitApply(o) => {
                let (Some(ns), Some(list)) = (o.meta().namespace.as_deref(), &mut self.list) else {
                    return;
                };
                if self
                    .readers
                    .get(ns)
                    .is_some_and(|rs| rs.iter().any(|r| r.id < list.for_below))
                {
                    list.objects.entry(ns.to_owned()).or_default().push(o);
                }
            }
            Event::InitDone => {
                let Some(mut list) = self.list.take() else {
                    return;
                };
                self.lists += 1;
                self.readers.retain(|ns, readers| {
                    let objects = list.objects.remove(ns).unwrap_or_default();
                    for r in readers.iter_mut().filter(|r| r.id < list.for_below) {
                        r.phase = Phase::Live(None);
                        r.start(objects.iter().cloned());
                    }
                    readers.retain(|r| !r.tx.is_closed());
                    !readers.is_empty()
                });
            }
            Event::Apply(ref o) | Event::Delete(ref o) => {
                let Some(ns) = o.meta().namespace.as_deref() else {
                    return;
                };
                let Some(readers) = self.readers.get_mut(ns) else {
                    return;
                };
                let version = revision(o);
                for r in readers.iter_mut() {
                    match &mut r.phase {
                        Phase::Listing(waiting) => waiting.push(event.clone()),
                        Phase::Live(since) => {
                            if newer(version, *since) {
                                let _ = r.tx.unbounded_send(Ok(event.clone()));
                            }
                        }
                    }
                }
                readers.retain(|r| !r.tx.is_closed());
                if readers.is_empty() {
                    let ns = ns.to_owned();
                    self.readers.remove(&ns);
                }
            }
        }
    }

    /// Reader `id` of `ns` listed `objects` at `since` itself: it gets them, then what waited
    /// for it past them, and is fed from now on.
    fn listed_own(&mut self, ns: &str, id: u64, objects: Vec<K>, since: Option<u64>) {
        let Some(reader) = self.waiting(ns, id) else {
            return;
        };
        reader.start(objects);
        let Phase::Listing(waiting) = std::mem::replace(&mut reader.phase, Phase::Live(since))
        else {
            return;
        };
        for event in waiting {
            let (Event::Apply(o) | Event::Delete(o)) = &event else {
                continue;
            };
            if newer(revision(o), since) {
                let _ = reader.tx.unbounded_send(Ok(event));
            }
        }
    }

    /// Reader `id` of `ns`, if it is still there and listing.
    fn waiting(&mut self, ns: &str, id: u64) -> Option<&mut Reader<K>> {
        self.readers
            .get_mut(ns)?
            .iter_mut()
            .find(|r| r.id == id && !r.tx.is_closed() && matches!(r.phase, Phase::Listing(_)))
    }
}

impl<K> Reader<K> {
    /// Hands the reader its namespace's `objects` as a watcher's list does.
    fn start(&self, objects: impl IntoIterator<Item = K>) {
        let _ = self.tx.unbounded_send(Ok(Event::Init));
        for o in objects {
            let _ = self.tx.unbounded_send(Ok(Event::InitApply(o)));
        }
        let _ = self.tx.unbounded_send(Ok(Event::InitDone));
    }
}

fn revision<K: Resource>(o: &K) -> Option<u64> {
    o.meta().resource_version.as_deref()?.parse().ok()
}

/// Whether a change at `version` is past `since` (one that cannot be compared is passed on).
fn newer(version: Option<u64>, since: Option<u64>) -> bool {
    match (version, since) {
        (Some(v), Some(s)) => v > s,
        _ => true,
    }
}

/// Lists `ns` for reader `id` and starts feeding it, unless the shared watch's own list
/// reached it first; lists again when the shared watch listed meanwhile.
async fn list<K>(api: Api<K>, params: ListParams, state: Arc<Mutex<State<K>>>, ns: String, id: u64)
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let mut wait = RETRY.0;
    loop {
        let lists = {
            let mut s = state.lock();
            if s.waiting(&ns, id).is_none() {
                return;
            }
            // While the shared watch lists, its end may feed this reader.
            s.list.is_none().then_some(s.lists)
        };
        let Some(lists) = lists else {
            tokio::time::sleep(RETRY.0).await;
            continue;
        };
        let listed = api.list(&params).await;
        let failed = {
            let mut s = state.lock();
            let again = s.list.is_some() || s.lists != lists;
            if s.waiting(&ns, id).is_none() {
                return;
            }
            match listed {
                Ok(_) if again => continue,
                Ok(list) => {
                    let since = list
                        .metadata
                        .resource_version
                        .as_deref()
                        .and_then(|v| v.parse().ok());
                    s.listed_own(&ns, id, list.items, since);
                    return;
                }
                Err(e) => e,
            }
        };
        tracing::warn!(namespace = %ns, error = %failed, "listing for a shared watch's reader");
        tokio::time::sleep(wait).await;
        wait = (wait * 2).min(RETRY.1);
    }
}

#[cfg(test)]
mod tests;
