//! The public handle: [`Store`] wraps one backend and adds what is the same for all of them
//! (URL dispatch, close, the request/reply plumbing to the writer, watches, auto compaction).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::oneshot;

use crate::backend::Backend;
use crate::batch::{Op, Request};
use crate::keys::Range;
use crate::watch::{self, WatchStream};
use crate::{memory, postgres, sqlite};
use crate::{Error, ListOptions, ListResult, Record, Render, Result, Revision};

/// A handle on the store. Cheap to clone; all clones share one backend, one writer and one
/// watch feed.
#[derive(Clone)]
pub struct Store {
    pub(crate) inner: Arc<dyn Backend>,
}

impl Store {
    /// Open a store: `sqlite:PATH` (the file is created if absent; its directory must exist),
    /// `postgres://user:pw@host:port/db` (tables are created if absent), or `memory:` /
    /// `memory:NAME` (kept in this process only; see the `memory` module).
    pub async fn open(url: &str) -> Result<Store> {
        Store::open_with(url, OpenOptions::default()).await
    }

    /// [`Store::open`] with options: `options.nats` makes a PostgreSQL store one replica of
    /// several sharing the database (see [`OpenOptions`]).
    pub async fn open_with(url: &str, options: OpenOptions) -> Result<Store> {
        for local in ["sqlite:", "memory:"] {
            if options.nats.is_some() && url.starts_with(local) {
                return Err(Error::ParseUrl {
                    url: format!("{local} with NATS (replicas need a shared postgres:// database)"),
                });
            }
        }
        let inner: Arc<dyn Backend> = if let Some(path) = url.strip_prefix("sqlite:") {
            // Accept `sqlite://PATH` too, as other tools write it.
            let path = path.strip_prefix("//").unwrap_or(path);
            Arc::new(sqlite::Sqlite::open(path, options.durability).await?)
        } else if let Some(name) = url.strip_prefix("memory:") {
            Arc::new(memory::Memory::open(name)?)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Arc::new(
                postgres::Postgres::open(url, options.nats.as_deref(), options.durability).await?,
            )
        } else {
            let scheme = url.split_once(':').map_or(url, |(s, _)| s);
            return Err(Error::ParseUrl {
                url: format!("{scheme}:…"),
            });
        };
        Ok(Store { inner })
    }

    /// The last committed revision (0 for an empty store). Cheap: an atomic load.
    pub fn revision(&self) -> Revision {
        self.inner.shared().revision()
    }

    /// The revision history has been compacted to (0 if never). Cheap: an atomic load.
    pub fn compacted_revision(&self) -> Revision {
        self.inner.shared().compacted()
    }

    /// The latest revision committed by anyone sharing the database: for a replica of several
    /// (opened with [`OpenOptions::nats`]) it asks the database, since other replicas commit
    /// too; otherwise it is [`Store::revision`]. A read that must see every write acknowledged
    /// so far, by any replica, waits for this revision.
    pub async fn current_revision(&self) -> Result<Revision> {
        self.inner.shared().check_open()?;
        self.inner.current_revision().await
    }

    /// The transactions this process's writer committed and the writes in them (their ratio
    /// is the group commit's size).
    pub fn commit_stats(&self) -> CommitStats {
        self.inner.shared().commit_stats()
    }

    /// For a replica of several (opened with [`OpenOptions::nats`]): whether it is the one
    /// that commits the writes of all, and how many of its own writes another committed.
    pub fn replica_stats(&self) -> Option<ReplicaStats> {
        self.inner.replica_stats()
    }

    /// Whether this process should run the server's own loops, the ones that follow every
    /// write and write on their own (garbage collection, namespace deletion, status of quotas
    /// and budgets): always for a store of one process; for a replica of several (opened with
    /// [`OpenOptions::nats`]), while the replicas have elected it to (one at a time, another
    /// within seconds of its death; every replica where the database cannot elect one).
    pub fn runs_loops(&self) -> tokio::sync::watch::Receiver<bool> {
        self.inner
            .runs_loops()
            .unwrap_or_else(|| tokio::sync::watch::channel(true).1)
    }

    /// The current record of `key`, if present.
    pub async fn get(&self, key: &str) -> Result<Option<Record>> {
        self.inner.shared().check_open()?;
        self.inner.get(key).await
    }

    /// Keys starting with `prefix`, in byte order, from one consistent snapshot: the latest, or
    /// the state at `opts.revision` ([`Error::Compacted`] if history before it is gone,
    /// [`Error::FutureRevision`] if it is not reached yet). Page with `start_after` = the last
    /// key of the previous page and `revision` = the previous page's revision.
    pub async fn list(&self, prefix: &str, opts: ListOptions) -> Result<ListResult> {
        self.inner.shared().check_open()?;
        let range = Range::new(prefix, opts.start_after.as_deref());
        self.inner
            .list(range, opts.revision, opts.limit.filter(|l| *l > 0))
            .await
    }

    /// Create `key`; [`Error::AlreadyExists`] if it is present.
    pub async fn create(&self, key: &str, render: impl Into<Render>) -> Result<Record> {
        self.write(Op::Create {
            key: key.to_owned(),
            render: render.into(),
        })
        .await
    }

    /// Replace `key`'s value if its mod revision is `expected_mod_revision`;
    /// [`Error::NotFound`] if absent, [`Error::Conflict`] (with the current record) if it
    /// changed.
    pub async fn update(
        &self,
        key: &str,
        expected_mod_revision: Revision,
        render: impl Into<Render>,
    ) -> Result<Record> {
        let op = Op::Update {
            key: key.to_owned(),
            expected: expected_mod_revision,
            render: render.into(),
        };
        self.write(op).await
    }

    /// Delete `key` if its mod revision is `expected_mod_revision` (errors as for `update`).
    /// `render` makes the tombstone value that the delete event carries. Returns the tombstone
    /// record, whose `mod_revision` is the deletion's revision.
    pub async fn delete(
        &self,
        key: &str,
        expected_mod_revision: Revision,
        render: impl Into<Render>,
    ) -> Result<Record> {
        let op = Op::Delete {
            key: key.to_owned(),
            expected: expected_mod_revision,
            render: render.into(),
        };
        self.write(op).await
    }

    async fn write(&self, op: Op) -> Result<Record> {
        self.inner.shared().check_open()?;
        self.inner.write(op).await
    }

    /// Events with revision > `from`, in revision order, none lost and none duplicated: first
    /// replayed from the event log, then live. Yields `Err(Compacted)` once and ends if history
    /// after `from` has been compacted away (also if a slow watcher falls behind a
    /// compaction); yields `Err(Closed)` and ends when the store closes (events it had not
    /// delivered by then are not; resume from the last one delivered after reopening).
    /// Dropping the stream unsubscribes. The feed is process-local: it carries commits made
    /// through this process's store.
    pub fn watch(&self, from: Revision) -> WatchStream {
        watch::watch(self.clone(), from)
    }

    /// Drop history up to and including `revision`: lists and watches below it now fail with
    /// [`Error::Compacted`]. Compacting to or below the current compacted revision does
    /// nothing; beyond the current revision is [`Error::FutureRevision`].
    pub async fn compact(&self, revision: Revision) -> Result<()> {
        let (reply, answer) = oneshot::channel();
        self.inner
            .shared()
            .submit(Request::Compact { revision, reply })
            .await?;
        answer.await.map_err(|_| Error::Closed)?
    }

    /// Every `every`, compact to the revision that was current one period earlier (like
    /// kube-apiserver's 5-minute compaction), so a client always has at least one period to
    /// page through a snapshot or resume a watch. The task stops when the returned handle is
    /// aborted, when the store is closed, or when every other handle on the store is dropped
    /// (it holds only a weak reference). Note that dropping a tokio `JoinHandle` detaches the
    /// task rather than stopping it: call `abort()`. A compaction already handed to the writer
    /// when the task is aborted still completes.
    pub fn spawn_auto_compaction(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            let mut ticker = tokio::time::interval(every);
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut previous: Option<Revision> = None;
            loop {
                ticker.tick().await;
                let Some(inner) = weak.upgrade() else { return };
                let store = Store { inner };
                if store.inner.shared().is_closed() {
                    return;
                }
                // Read at the tick, so the target is never newer than one period ago.
                let now = store.revision();
                if let Some(target) = previous.filter(|t| *t > store.compacted_revision()) {
                    match store.compact(target).await {
                        Ok(()) => tracing::debug!(revision = target, "auto compaction done"),
                        Err(Error::Closed) => return,
                        Err(e) => {
                            tracing::warn!(error = %e, revision = target, "auto compaction failed; retrying next period")
                        }
                    }
                }
                previous = Some(now);
            }
        })
    }

    /// Finish the writes already submitted, stop the writer, end live watches and release the
    /// database. Later calls on any clone return [`Error::Closed`]. Idempotent.
    pub async fn close(&self) {
        let shared = self.inner.shared();
        shared.close_writer().await;
        self.inner.close_reads();
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("revision", &self.revision())
            .field("compacted_revision", &self.compacted_revision())
            .finish_non_exhaustive()
    }
}

/// What this process's writer committed (see [`Store::commit_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CommitStats {
    /// Transactions committed.
    pub commits: u64,
    /// Writes in them.
    pub writes: u64,
}

/// How a replica of several shares the writing (see [`Store::replica_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReplicaStats {
    /// This replica commits the writes of every replica (the writer of record).
    pub writer_of_record: bool,
    /// This replica's writes that the writer of record committed.
    pub handed_on: u64,
}

/// Options of [`Store::open_with`].
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// `nats://HOST:PORT`: this store is one of several replicas sharing a PostgreSQL
    /// database. Each announces its commits on NATS and follows the others', so watches on
    /// every replica see every commit. Refused for SQLite.
    pub nats: Option<String>,
    /// When a write is acknowledged: on disk (the default) or as soon as it is committed.
    pub durability: Durability,
}

/// When the store acknowledges a write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// On disk: each group commit is flushed (fsync) before its writes are answered, so an
    /// acknowledged write survives power loss and an OS crash. Writes committed together share
    /// the flush. SQLite `synchronous=FULL`; PostgreSQL `synchronous_commit=on`.
    #[default]
    Full,
    /// Committed, not yet flushed: an acknowledged write survives the process being killed but
    /// the last ones may be lost with the machine (SQLite `synchronous=NORMAL` in WAL mode,
    /// flushed at checkpoints; PostgreSQL `synchronous_commit=off`). The database stays
    /// consistent. For labs and benchmarks.
    Relaxed,
}
