//! The watch cache: every object the hub stores, in memory, fed by the store's event stream.
//!
//! Reads (GET, LIST) and watches are served from here, as kube-apiserver serves them from its
//! watch cache; the store is only asked for writes, for snapshot pages at an old revision, and
//! at startup. Objects are kept as the exact JSON bytes the store holds (resourceVersion
//! included), so serving them needs no re-encoding, and one encoded event fans out to every
//! watcher of the directory it changed in ([`feeds`]). A watcher that falls more than
//! [`BROADCAST_CAPACITY`] events of its resource behind (or [`feeds::NARROW_CAPACITY`] of its
//! namespace) is dropped (it resumes from its last resourceVersion, as clients do on a closed
//! watch) so memory never grows with slow readers.

mod feeds;
mod hints;
mod object;
mod sealed;
mod subscribe;

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::StreamExt;
use parking_lot::RwLock;
use tokio::sync::watch;

use flotilla_store::{EventKind, Revision, Store};

pub use feeds::NARROW_CAPACITY;
pub use object::CachedObject;
pub use subscribe::Subscription;

use crate::encryption::Encryption;
use crate::error::{ApiError, Result};

/// How many events of its resource a watcher may lag behind before it catches up from the
/// history instead of the feed. Each slot is allocated with the feed and keeps its change
/// alive until overwritten: at 16,384 the seventy resource feeds of an idle hub's controllers
/// held 46 MB of slots and minutes of Lease renewals.
pub const BROADCAST_CAPACITY: usize = 2048;
/// At most how many past events are kept in memory to resume watches from a resourceVersion.
pub const HISTORY_LEN: usize = 50_000;
/// Past events older than this leave the in-memory history (as kube-apiserver's watch cache
/// keeps about 75 s of events), once it holds more than [`HISTORY_MIN`]: a busy hub does not
/// keep 50,000 objects' old versions for good. A watch resuming from further back is replayed
/// from the store's event log ([`Cache::subscribe_replaying`]), not answered 410.
pub const HISTORY_FRESH: Duration = Duration::from_secs(75);
/// The in-memory history keeps at least this many events, however old.
pub const HISTORY_MIN: usize = 1_000;
/// Beyond [`HISTORY_MIN`] events, the in-memory history holds at most about this much memory
/// of objects (each change's object and the version it replaced, compressed, with what the
/// cache keeps beside each). Most of them are versions
/// nothing else holds any more: while 10,000 Deployments propagated, 75 s of changes (50,000
/// of them, bindings' and Works' status included) kept some 200 MB of superseded versions
/// alive. A watch resuming from further back is replayed from the store's event log.
pub const HISTORY_BYTES: usize = 32 << 20;

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Deleted (the object is the tombstone, with the deletion's resourceVersion).
    Deleted,
}

impl ChangeKind {
    /// The change a store event makes: a put of a key that existed before modifies it.
    fn of(kind: EventKind, existed: bool) -> ChangeKind {
        match (kind, existed) {
            (EventKind::Delete, _) => ChangeKind::Deleted,
            (EventKind::Put, true) => ChangeKind::Modified,
            (EventKind::Put, false) => ChangeKind::Added,
        }
    }

    /// The watch event `type`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "ADDED",
            ChangeKind::Modified => "MODIFIED",
            ChangeKind::Deleted => "DELETED",
        }
    }
}

/// One change, as seen by the cache.
#[derive(Debug)]
pub struct Change {
    /// Revision of the change.
    pub revision: Revision,
    /// What happened.
    pub kind: ChangeKind,
    /// The object after the change (for deletions: its last state).
    pub object: Arc<CachedObject>,
    /// The object before the change, if it existed (used to filter watches by selector).
    pub prev: Option<Arc<CachedObject>>,
}

impl Change {
    /// The memory of the objects this change holds (its object and the one it replaced).
    fn bytes(&self) -> usize {
        self.object.footprint() + self.prev.as_ref().map_or(0, |p| p.footprint())
    }
}

#[derive(Default)]
struct State {
    revision: Revision,
    /// History is complete for every revision strictly greater than this.
    history_start: Revision,
    objects: BTreeMap<String, Arc<CachedObject>>,
    /// Past changes, oldest first, each with when it was applied.
    history: VecDeque<(Instant, Arc<Change>)>,
    /// The bytes of the objects the history holds ([`Change::bytes`]).
    history_bytes: usize,
}

impl State {
    /// Add `change`, applied at `now`, to the history and trim it.
    fn remember(&mut self, now: Instant, change: Arc<Change>) {
        self.history_bytes += change.bytes();
        self.history.push_back((now, change));
        self.trim_history(now);
    }

    /// Drop the oldest changes beyond [`HISTORY_LEN`] or [`HISTORY_BYTES`], and those older
    /// than [`HISTORY_FRESH`], keeping at least [`HISTORY_MIN`].
    fn trim_history(&mut self, now: Instant) {
        while self.history.len() > HISTORY_MIN {
            let stale = self
                .history
                .front()
                .is_some_and(|(at, _)| now.saturating_duration_since(*at) > HISTORY_FRESH);
            if !stale && self.history.len() <= HISTORY_LEN && self.history_bytes <= HISTORY_BYTES {
                break;
            }
            if let Some((_, old)) = self.history.pop_front() {
                self.history_start = old.revision;
                self.history_bytes -= old.bytes();
            }
        }
    }
}

/// The watch cache.
pub struct Cache {
    store: Store,
    /// What the store holds sealed is opened as it is read (the cache holds clear objects).
    sealed: sealed::Sealed,
    state: RwLock<State>,
    feeds: feeds::Feeds,
    applied: watch::Sender<Revision>,
    hints: hints::Hints,
}

fn successor(prefix: &str) -> String {
    // Keys are ASCII paths; the successor of a prefix ending in '/' is the same with '0'.
    let mut s = prefix.to_string();
    if let Some(last) = s.pop() {
        s.push(char::from_u32(last as u32 + 1).unwrap_or(char::MAX));
    }
    s
}

impl Cache {
    /// Load everything from the store and keep following it.
    pub async fn start(store: Store) -> Result<Arc<Cache>> {
        Cache::start_with(store, BROADCAST_CAPACITY, Arc::default()).await
    }

    /// [`Cache::start`] with watchers of the whole store or of a resource ending when they fall
    /// `buffer` changes behind (a process serving many small APIs, `flotilla sim`, keeps it
    /// small: each watched directory's buffer is allocated whole).
    /// `encryption` opens what the store holds sealed.
    pub async fn start_with(
        store: Store,
        buffer: usize,
        encryption: Arc<Encryption>,
    ) -> Result<Arc<Cache>> {
        let mut objects = BTreeMap::new();
        let sealed = sealed::Sealed::new(encryption);
        let mut start_after = None;
        let mut revision = None;
        loop {
            let page = store
                .list(
                    "/registry/",
                    flotilla_store::ListOptions {
                        revision,
                        start_after,
                        limit: Some(10_000),
                    },
                )
                .await?;
            revision = Some(page.revision);
            start_after = page.records.last().map(|r| r.key.clone());
            for r in page.records {
                let value = sealed.open(&r.key, r.value, true)?;
                let o = CachedObject::new(r.key.clone(), value, r.mod_revision).map_err(|e| {
                    ApiError::internal(format!("stored object {} is not JSON: {e}", r.key))
                })?;
                objects.insert(r.key, Arc::new(o));
            }
            if !page.more {
                break;
            }
        }
        let revision = revision.unwrap_or(0);
        let (applied, _) = watch::channel(revision);
        let cache = Arc::new(Cache {
            store: store.clone(),
            sealed,
            state: RwLock::new(State {
                revision,
                history_start: revision,
                objects,
                history: VecDeque::new(),
                history_bytes: 0,
            }),
            feeds: feeds::Feeds::new(buffer),
            applied,
            hints: hints::Hints::default(),
        });
        tracing::info!(
            revision,
            objects = cache.state.read().objects.len(),
            "watch cache loaded"
        );
        let follower = cache.clone();
        tokio::spawn(async move { follower.follow(revision).await });
        Ok(cache)
    }

    async fn follow(self: Arc<Self>, from: Revision) {
        let mut events = self.store.watch(from);
        while let Some(ev) = events.next().await {
            match ev {
                Ok(ev) => self.apply(ev),
                Err(e) => {
                    // The store's own stream never compacts away what we haven't read; any
                    // error here means the store is closing.
                    tracing::warn!(error = %e, "store watch ended");
                    return;
                }
            }
        }
    }

    fn apply(&self, mut ev: flotilla_store::Event) {
        let put = ev.kind == EventKind::Put;
        if !put {
            self.sealed.forget(&ev.key);
        }
        ev.value = match self.sealed.open(&ev.key, ev.value, put) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!(key = %ev.key, error = %e.message, "skipping a stored object that does not open");
                return;
            }
        };
        let hint = self.hints.take(&ev.key, &ev.value);
        let obj = match CachedObject::new(ev.key.clone(), ev.value, ev.revision) {
            Ok(o) => {
                if let Some((defaults, changed)) = hint {
                    o.changed_by_defaults(&defaults, || changed);
                }
                Arc::new(o)
            }
            Err(e) => {
                tracing::error!(key = %ev.key, error = %e, "skipping undecodable stored object");
                return;
            }
        };
        let mut st = self.state.write();
        let prev = match ev.kind {
            EventKind::Put => st.objects.insert(ev.key.clone(), obj.clone()),
            EventKind::Delete => st.objects.remove(&ev.key),
        };
        let kind = ChangeKind::of(ev.kind, prev.is_some());
        let change = Arc::new(Change {
            revision: ev.revision,
            kind,
            object: obj,
            prev,
        });
        st.revision = ev.revision;
        let now = Instant::now();
        st.remember(now, change.clone());
        // Sent under the lock so that subscribe() sees every change exactly once.
        self.feeds.send(&change);
        drop(st);
        self.applied.send_replace(ev.revision);
    }

    /// The revision the cache has applied.
    pub fn revision(&self) -> Revision {
        self.state.read().revision
    }

    /// Wait until the cache has applied `rev` (bounded: a revision from the future is an error).
    pub async fn wait_for(&self, rev: Revision) -> Result<()> {
        // The common case, on every write and consistent read: already there, no subscription.
        if *self.applied.borrow() >= rev {
            return Ok(());
        }
        let mut rx = self.applied.subscribe();
        let ok = tokio::time::timeout(Duration::from_secs(3), async {
            rx.wait_for(|applied| *applied >= rev).await.is_ok()
        })
        .await;
        match ok {
            Ok(true) => Ok(()),
            _ => Err(ApiError::timeout(format!(
                "Too large resource version: {rev}, current: {}",
                self.revision()
            ))),
        }
    }

    /// Wait until every write this process's store acknowledged so far is visible (after a
    /// write, to answer with what was written).
    pub async fn sync(&self) -> Result<()> {
        self.wait_for(self.store.revision()).await
    }

    /// Wait until every write acknowledged so far by anyone is visible, including other hub
    /// replicas sharing the database (a consistent read; alone on the database, as
    /// [`Cache::sync`]).
    pub async fn sync_current(&self) -> Result<()> {
        self.wait_for(self.store.current_revision().await?).await
    }

    /// One object.
    pub fn get(&self, key: &str) -> Option<Arc<CachedObject>> {
        self.state.read().objects.get(key).cloned()
    }

    /// Every object under `prefix` (in key order) after `start_after`, with the revision the
    /// snapshot was taken at. `filter` selects; at most `limit` are returned, and the bool says
    /// whether more matching objects remain. `prefix` is a directory (ends with `/`): an object's
    /// key is no prefix of "that object" (`…/db` also starts `…/db-admin`); read one object
    /// with [`Cache::get`], or filter a directory by name.
    pub fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        limit: Option<usize>,
        mut filter: impl FnMut(&CachedObject) -> bool,
    ) -> (Vec<Arc<CachedObject>>, Revision, bool) {
        debug_assert!(prefix.ends_with('/'), "not a directory: {prefix}");
        let st = self.state.read();
        let end = successor(prefix);
        let lower = match start_after {
            Some(k) if k >= prefix => std::ops::Bound::Excluded(k.to_string()),
            _ => std::ops::Bound::Included(prefix.to_string()),
        };
        let mut out = Vec::new();
        let mut more = false;
        for (_, o) in st.objects.range((lower, std::ops::Bound::Excluded(end))) {
            if !filter(o) {
                continue;
            }
            if limit.is_some_and(|l| out.len() >= l) {
                more = true;
                break;
            }
            out.push(o.clone());
        }
        (out, st.revision, more)
    }

    /// Number of objects under `prefix` (for metrics and namespace deletion).
    pub fn count(&self, prefix: &str) -> usize {
        let st = self.state.read();
        st.objects
            .range(prefix.to_string()..successor(prefix))
            .count()
    }

    /// The store behind the cache.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// A value read from the store at `key`, in clear (see [`crate::encryption`]).
    pub fn open(&self, key: &str, stored: Bytes) -> Result<Bytes> {
        self.sealed.open(key, stored, false)
    }

    /// Whether the value stored at `key` should be rewritten even by an update that changes
    /// nothing (stored under an old key, or clear where it would be sealed).
    pub fn is_stale(&self, key: &str) -> bool {
        self.sealed.is_stale(key)
    }

    /// Whether writes at `key` are stored sealed.
    pub fn seals(&self, key: &str) -> bool {
        self.sealed.seals(key)
    }

    /// `plain`, as the store keeps it at `key`.
    pub fn seal(&self, key: &str, plain: Bytes) -> Bytes {
        self.sealed.seal(key, plain)
    }
}

#[cfg(test)]
mod tests;
