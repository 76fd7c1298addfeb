//! [`Informer`]: one watch of a kind and one store of its objects, shared by every controller of
//! a process that reads that kind.
//!
//! Each controller used to keep its own watch and its own reflector store, so a hub held one
//! copy of every binding per controller that reads bindings (five). An informer holds one copy
//! (kept [`lean`](crate::lean)); its readers share the store and each gets the changes as a
//! stream of [`Change`]s, handing out the stored `Arc`, never a copy.
//!
//! A reader that subscribes after the first list first gets every stored object as
//! [`Change::Applied`], so it misses nothing whenever it starts. Readers' channels are
//! unbounded: a slow reader holds references to objects, not copies, and never stalls the
//! watch or the other readers.

use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

use futures::channel::mpsc;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::{self, watcher, Event};
use kube::runtime::WatchStreamExt;
use kube::{Api, Resource};
use parking_lot::Mutex;
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::task::JoinHandle;

use crate::compact::Compact;
use crate::text::Dictionary;

/// What a reader of an [`Informer`] is told.
pub enum Change<K> {
    /// The object is in the store as given (new, changed, or there when the reader came).
    Applied(Arc<K>),
    /// The object left the store; this was its last state.
    Deleted(Arc<K>),
}

impl<K> Clone for Change<K> {
    fn clone(&self) -> Self {
        match self {
            Change::Applied(o) => Change::Applied(o.clone()),
            Change::Deleted(o) => Change::Deleted(o.clone()),
        }
    }
}

/// One watch of `K` filling one store, read by many; cheap to clone (clones share it). The
/// watch starts with the first [`store`](Informer::store) or
/// [`subscribe`](Informer::subscribe) and stops when the last clone is dropped.
pub struct Informer<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    inner: Arc<Inner<K>>,
}

impl<K> Clone for Informer<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

/// A watch's events, each object as it is stored.
type Source<K> = Box<dyn Fn() -> BoxStream<'static, watcher::Result<Event<K>>> + Send + Sync>;

struct Inner<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    /// Starts the watch: its events, the objects as they are stored.
    source: Source<K>,
    store: Store<K>,
    shared: Arc<Mutex<Shared<K>>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl<K> Drop for Inner<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    fn drop(&mut self) {
        if let Some(task) = self.task.get_mut().take() {
            task.abort();
        }
    }
}

struct Shared<K>
where
    K: Resource + Clone + 'static,
    K::DynamicType: Eq + Hash + Clone,
{
    writer: Writer<K>,
    readers: Vec<mpsc::UnboundedSender<Change<K>>>,
    /// Whether a first list has been stored.
    listed: bool,
}

impl<K> Informer<K>
where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    /// An informer of `api`'s objects that `config` selects.
    pub fn new(api: Api<K>, config: watcher::Config) -> Self {
        Self::trimmed(api, config, crate::lean::<K>)
    }

    /// As [`Informer::new`], storing objects as `trim` leaves them: it must at least make them
    /// [`lean`](crate::lean), and cut off only what none of the informer's readers read.
    pub fn trimmed(api: Api<K>, config: watcher::Config, trim: fn(&mut K)) -> Self {
        Self::from_source(Box::new(move || {
            watcher(api.clone(), config.clone())
                .default_backoff()
                .modify(trim)
                .boxed()
        }))
    }
}

impl<K> Informer<Compact<K>>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Debug + Send + Sync,
    K: 'static,
{
    /// An informer of `api`'s objects that `config` selects, trimmed as with
    /// [`Informer::trimmed`] and kept [`Compact`].
    pub fn compact(api: Api<K>, config: watcher::Config, trim: fn(&mut K)) -> Self {
        Self::from_source(Box::new(move || {
            let mut dictionary = Dictionary::default();
            watcher(api.clone(), config.clone())
                .default_backoff()
                .modify(trim)
                .map_ok(move |e| Compact::pack_event(e, &mut dictionary))
                .boxed()
        }))
    }
}

impl<K> Informer<K>
where
    K: Resource + Clone + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone + Send + Sync,
{
    fn from_source(source: Source<K>) -> Self {
        let writer = Writer::default();
        let store = writer.as_reader();
        Self {
            inner: Arc::new(Inner {
                source,
                store,
                shared: Arc::new(Mutex::new(Shared {
                    writer,
                    readers: Vec::new(),
                    listed: false,
                })),
                task: Mutex::new(None),
            }),
        }
    }

    /// The shared store (ready once the first list is in).
    pub fn store(&self) -> Store<K> {
        self.start();
        self.inner.store.clone()
    }

    /// Every change from now on, after every object already stored as `Applied`. Dropping
    /// the stream unsubscribes.
    pub fn subscribe(&self) -> BoxStream<'static, Change<K>> {
        let (tx, rx) = mpsc::unbounded();
        {
            let mut shared = self.inner.shared.lock();
            if shared.listed {
                for o in self.inner.store.state() {
                    let _ = tx.unbounded_send(Change::Applied(o));
                }
            }
            shared.readers.push(tx);
        }
        self.start();
        rx.boxed()
    }

    /// The objects applied, as [`subscribe`](Informer::subscribe) gives them (for
    /// `Controller::for_shared_stream` over [`store`](Informer::store)).
    pub fn applied(&self) -> BoxStream<'static, Arc<K>> {
        self.subscribe()
            .filter_map(|c| {
                futures::future::ready(match c {
                    Change::Applied(o) => Some(o),
                    Change::Deleted(_) => None,
                })
            })
            .boxed()
    }

    fn start(&self) {
        let mut task = self.inner.task.lock();
        if task.is_none() {
            let events = (self.inner.source)();
            let shared = self.inner.shared.clone();
            let store = self.inner.store.clone();
            *task = Some(tokio::spawn(dispatch(events, shared, store)));
        }
    }
}

/// Stores the watch's events and tells every reader.
async fn dispatch<K, S>(events: S, shared: Arc<Mutex<Shared<K>>>, store: Store<K>)
where
    K: Resource + Clone + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
    S: futures::Stream<Item = watcher::Result<Event<K>>> + Unpin,
{
    let mut events = std::pin::pin!(crate::ok_events(events, "informer"));
    while let Some(event) = events.next().await {
        let mut shared = shared.lock();
        shared.writer.apply_watcher_event(&event);
        let changes: Vec<Change<K>> = match event {
            Event::Apply(o) => store
                .get(&ObjectRef::from_obj(&o))
                .map(Change::Applied)
                .into_iter()
                .collect(),
            Event::Delete(o) => vec![Change::Deleted(Arc::new(o))],
            Event::InitDone => {
                shared.listed = true;
                store.state().into_iter().map(Change::Applied).collect()
            }
            Event::Init | Event::InitApply(_) => continue,
        };
        shared.readers.retain(|tx| !tx.is_closed());
        for change in changes {
            for tx in &shared.readers {
                let _ = tx.unbounded_send(change.clone());
            }
        }
    }
}
