//! The private trait each backend implements, and the state every backend shares with the
//! [`Store`](crate::Store) handle: the revision counters, the writer's channel, and the
//! broadcast of committed events that live watchers follow.
//!
//! A backend only does storage: point reads, snapshot lists, and event-log reads on its read
//! pool, plus a writer that drains [`Request`]s and reports commits through [`Shared`]. The
//! contract logic (closing, watch replay and catch-up, auto compaction) lives above it, once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use parking_lot::Mutex;
use tokio::sync::{broadcast, mpsc, watch, Notify};

use crate::batch::{Op, Request};
use crate::keys::Range;
use crate::{Error, Event, ListResult, Record, Result, Revision};

/// Capacity of the writer's request queue; senders wait when it is full.
const QUEUE: usize = 8192;
/// Committed batches a live watcher may fall behind before it re-reads the event log.
const BROADCAST: usize = 1024;

#[async_trait]
pub(crate) trait Backend: Send + Sync + 'static {
    fn shared(&self) -> &Arc<Shared>;

    /// The current record of `key`.
    async fn get(&self, key: &str) -> Result<Option<Record>>;

    /// Records in `range` from one consistent snapshot: the latest when `revision` is `None`,
    /// else the state at `revision` (rebuilt from the event log). `limit` is > 0 when set.
    async fn list(
        &self,
        range: Range,
        revision: Option<Revision>,
        limit: Option<usize>,
    ) -> Result<ListResult>;

    /// Up to `limit` logged events with revision > `after`, in order; `Compacted` if the log no
    /// longer holds all of them.
    async fn events_after(&self, after: Revision, limit: usize) -> Result<Vec<Event>>;

    /// Commit one write (the writer of this process takes it, unless the backend hands it
    /// elsewhere).
    async fn write(&self, op: Op) -> Result<Record> {
        self.shared().write(op).await
    }

    /// How this replica shares the writing, for a replica of several.
    fn replica_stats(&self) -> Option<crate::ReplicaStats> {
        None
    }

    /// For a replica of several: whether it runs the server's own loops, as it changes.
    fn runs_loops(&self) -> Option<watch::Receiver<bool>> {
        None
    }

    /// The latest revision committed by anyone sharing the database.
    async fn current_revision(&self) -> Result<Revision> {
        Ok(self.shared().revision())
    }

    /// Drop the read connections (the writer has already stopped).
    fn close_reads(&self);
}

/// State shared by the handle, the backend and its writer.
pub(crate) struct Shared {
    revision: AtomicI64,
    compacted: AtomicI64,
    closed: AtomicBool,
    writer: Mutex<Option<mpsc::Sender<Request>>>,
    writer_done: watch::Receiver<()>,
    events: Mutex<Option<broadcast::Sender<Arc<[Event]>>>>,
    order: Mutex<Order>,
    /// Woken when a batch waits for earlier revisions only the database can give (replicas).
    gap: Notify,
    /// Woken whenever the revision counter advances.
    advanced: Notify,
    /// Transactions this process's writer committed, and the writes in them.
    commits: std::sync::atomic::AtomicU64,
    committed_writes: std::sync::atomic::AtomicU64,
}

/// How committed batches reach the broadcast.
///
/// A process alone on its database commits in revision order and broadcasts as it commits.
/// A replica of several also broadcasts what the others committed, learned later and from
/// elsewhere (see `postgres::peers`): it keeps the broadcast in revision order by holding a
/// batch that does not follow the last one sent until the revisions before it arrive.
struct Order {
    /// Whether to hold batches for missing revisions (replica mode).
    strict: bool,
    /// The last revision broadcast.
    sent: Revision,
    /// Batches held, by first revision: `(last revision, events)`.
    held: BTreeMap<Revision, (Revision, Vec<Event>)>,
}

/// What the writer owns: its request queue, the signal that it has stopped (dropped when the
/// writer returns), and where it reports commits.
pub(crate) struct WriterEnd {
    pub requests: mpsc::Receiver<Request>,
    pub done: watch::Sender<()>,
    pub report: Reporter,
}

/// The writer's weak link to [`Shared`]. Weak, so that dropping every handle on a store that
/// was never closed drops the request sender, which lets the writer drain and stop instead
/// of leaking its thread and connection.
pub(crate) struct Reporter(Weak<Shared>);

impl Reporter {
    /// After a commit: advance the counter, then wake live watchers.
    pub(crate) fn committed(&self, last: Revision, events: Vec<Event>) {
        if let Some(shared) = self.0.upgrade() {
            if !events.is_empty() {
                shared.commits.fetch_add(1, Ordering::Relaxed);
                shared
                    .committed_writes
                    .fetch_add(events.len() as u64, Ordering::Relaxed);
            }
            shared.committed(last, events);
        }
    }

    /// After a compaction commits.
    pub(crate) fn compacted_to(&self, revision: Revision) {
        if let Some(shared) = self.0.upgrade() {
            shared.compacted_to(revision);
        }
    }
}

impl Shared {
    /// Counters as loaded from the database at open.
    /// `strict`: this process is one replica of several (see [`Order`]).
    pub(crate) fn new(
        revision: Revision,
        compacted: Revision,
        strict: bool,
    ) -> (Arc<Shared>, WriterEnd) {
        let (tx, requests) = mpsc::channel(QUEUE);
        let (done, writer_done) = watch::channel(());
        let (events, _) = broadcast::channel(BROADCAST);
        let shared = Arc::new(Shared {
            revision: AtomicI64::new(revision),
            compacted: AtomicI64::new(compacted),
            closed: AtomicBool::new(false),
            writer: Mutex::new(Some(tx)),
            writer_done,
            events: Mutex::new(Some(events)),
            order: Mutex::new(Order {
                strict,
                sent: revision,
                held: BTreeMap::new(),
            }),
            gap: Notify::new(),
            advanced: Notify::new(),
            commits: Default::default(),
            committed_writes: Default::default(),
        });
        let report = Reporter(Arc::downgrade(&shared));
        (
            shared,
            WriterEnd {
                requests,
                done,
                report,
            },
        )
    }

    pub(crate) fn revision(&self) -> Revision {
        self.revision.load(Ordering::Acquire)
    }

    /// Transactions this process's writer committed, and the writes in them.
    pub(crate) fn commit_stats(&self) -> crate::CommitStats {
        crate::CommitStats {
            commits: self.commits.load(Ordering::Relaxed),
            writes: self.committed_writes.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn compacted(&self) -> Revision {
        self.compacted.load(Ordering::Acquire)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Fail fast once closed.
    pub(crate) fn check_open(&self) -> Result<()> {
        if self.is_closed() {
            return Err(Error::Closed);
        }
        Ok(())
    }

    /// Hand a request to the writer.
    pub(crate) async fn submit(&self, request: Request) -> Result<()> {
        self.check_open()?;
        let tx = self.writer.lock().clone().ok_or(Error::Closed)?;
        tx.send(request).await.map_err(|_| Error::Closed)
    }

    /// Have this process's writer commit `op`: `Err(Closed)` if it was not taken, else its
    /// answer (`Closed` too if the writer died with it).
    pub(crate) async fn write(&self, op: Op) -> Result<Record> {
        self.taken(op).await?.await
    }

    /// Hand `op` to the writer; the answer to wait for once it is taken.
    pub(crate) async fn taken(
        &self,
        op: Op,
    ) -> Result<impl std::future::Future<Output = Result<Record>>> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.submit(Request::Write { op, reply }).await?;
        // The writer answers every request it takes, even while closing; a dropped reply
        // means it died.
        Ok(async move { answer.await.map_err(|_| Error::Closed)? })
    }

    /// Wait until the revision counter reaches `revision`, at most `limit`; whether it did.
    pub(crate) async fn reached(&self, revision: Revision, limit: std::time::Duration) -> bool {
        let wait = async {
            loop {
                let advanced = self.advanced.notified();
                if self.revision() >= revision {
                    return;
                }
                advanced.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    /// A receiver of committed batches, or `None` once closed.
    pub(crate) fn subscribe(&self) -> Option<broadcast::Receiver<Arc<[Event]>>> {
        self.events
            .lock()
            .as_ref()
            .map(broadcast::Sender::subscribe)
    }

    /// Hand committed events to live watchers (and advance the counter). In strict order a
    /// batch after a hole is held until the hole is filled, and what was already sent is
    /// dropped, so every revision is broadcast once, in order.
    pub(crate) fn committed(&self, last: Revision, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        self.revision.fetch_max(last, Ordering::AcqRel);
        self.advanced.notify_waiters();
        let mut order = self.order.lock();
        if !order.strict {
            order.sent = order.sent.max(last);
            self.send(events);
            return;
        }
        let first = events[0].revision;
        if first > order.sent + 1 {
            let held = order.held.entry(first).or_insert((last, Vec::new()));
            if held.1.len() < events.len() {
                *held = (last, events);
            }
            drop(order);
            self.gap.notify_one();
            return;
        }
        self.send_after(&mut order, last, events);
        let order = &mut *order;
        while let Some(entry) = order.held.first_entry() {
            if *entry.key() > order.sent + 1 {
                break;
            }
            let (last, events) = entry.remove();
            self.send_after(order, last, events);
        }
    }

    /// Broadcast the part of `events` after what was sent.
    fn send_after(&self, order: &mut Order, last: Revision, mut events: Vec<Event>) {
        if last <= order.sent {
            return;
        }
        let sent = order.sent;
        events.retain(|e| e.revision > sent);
        order.sent = last;
        self.send(events);
    }

    fn send(&self, events: Vec<Event>) {
        if let Some(tx) = self.events.lock().as_ref() {
            // An error only means nobody is watching right now.
            let _ = tx.send(events.into());
        }
    }

    /// Give up on revisions up to `revision` (compacted away before this replica read them):
    /// the broadcast goes on after it, and watchers that needed them find out from the log.
    pub(crate) fn skip_to(&self, revision: Revision) {
        let mut order = self.order.lock();
        order.sent = order.sent.max(revision);
        self.revision.fetch_max(revision, Ordering::AcqRel);
        self.advanced.notify_waiters();
    }

    /// The last revision broadcast to live watchers.
    pub(crate) fn sent(&self) -> Revision {
        self.order.lock().sent
    }

    /// The last revision of the held batches, if a hole keeps any from the broadcast.
    pub(crate) fn held_until(&self) -> Option<Revision> {
        self.order.lock().held.values().map(|(last, _)| *last).max()
    }

    /// Wait until a batch is held for a hole.
    pub(crate) async fn hole(&self) {
        self.gap.notified().await;
    }

    fn compacted_to(&self, revision: Revision) {
        self.compacted.fetch_max(revision, Ordering::AcqRel);
    }

    /// Stop taking writes, wait until the writer has finished what it took, then end the
    /// live watch feed. Idempotent; concurrent callers all wait.
    pub(crate) async fn close_writer(&self) {
        self.closed.store(true, Ordering::Release);
        drop(self.writer.lock().take());
        let mut done = self.writer_done.clone();
        // Resolves with Err when the writer drops its end, i.e. when it has returned.
        while done.changed().await.is_ok() {}
        drop(self.events.lock().take());
    }
}

#[cfg(test)]
mod tests;
