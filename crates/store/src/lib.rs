//! Storage for the hub: an etcd-like revisioned key-value store under the Kubernetes-compatible
//! API server.
//!
//! # Model
//! One global revision counter; every successful write (create, update, delete) gets the next
//! revision, so revisions are strictly increasing and, with one writer per database, gap-free.
//! An empty store is at revision **0**; its first write is revision 1. Values are opaque bytes
//! (the API server stores JSON objects); keys are strings such as
//! `/registry/apps/deployments/ns1/web`, listed by prefix in byte order.
//!
//! Every write is recorded in an event log in the same transaction as the object itself. The
//! log serves lists at older revisions (pagination over a consistent snapshot) and watches,
//! which replay the log and then follow live commits. [`Store::compact`] drops log entries up
//! to a revision; older lists and watches then fail with [`Error::Compacted`].
//!
//! # Backends
//! [`Store::open`] takes `sqlite:PATH` (embedded, the default) or
//! `postgres://user:pw@host:port/db` (for several hub replicas; plain SQL so CockroachDB can
//! follow; TLS as libpq's `sslmode`, see the `postgres` module), or `memory:[NAME]` (kept in
//! the process only: simulated member clusters, tests). Log store URLs only through
//! [`redact_url`]. All sit behind one private trait; all run one writer that group-commits queued
//! writes in one transaction, and all are held to the same contract by [`conformance`].
//!
//! # Replicas
//! Several processes may share one PostgreSQL database ([`OpenOptions::nats`]): commits are
//! serialized by a row lock, so revisions commit in order; each replica announces its commits
//! on NATS and follows the others' (reading the event log for anything it missed), so every
//! replica's watch feed carries every commit, in revision order, exactly once.
#![deny(missing_docs)]

mod backend;
mod batch;
pub mod conformance;
mod error;
mod keys;
mod memory;
mod pool;
mod postgres;
pub mod private;
mod render;
mod sql;
mod sqlite;
mod store;
mod watch;

use bytes::Bytes;

pub use error::{Error, Result, Source};
pub use postgres::url::redact_url;
pub use render::Render;
pub use store::{CommitStats, Durability, OpenOptions, ReplicaStats, Store};
pub use watch::WatchStream;

/// A position in the store's history. 0 is the empty store; the first write is 1.
pub type Revision = i64;

/// A stored key and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The key, e.g. `/registry/apps/deployments/ns1/web`.
    pub key: String,
    /// The value (for a deleted key's tombstone record: the tombstone value).
    pub value: Bytes,
    /// Revision of the create that started this key's current life.
    pub create_revision: Revision,
    /// Revision of the last write to the key (for a tombstone: the deletion's revision).
    pub mod_revision: Revision,
}

/// The kind of a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A create or update.
    Put,
    /// A delete.
    Delete,
}

/// One committed change, as watchers see it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// The revision of the write.
    pub revision: Revision,
    /// The key written.
    pub key: String,
    /// Put or delete.
    pub kind: EventKind,
    /// For Put the new value; for Delete the tombstone value rendered at deletion.
    pub value: Bytes,
    /// The value before the write; `None` for a create.
    pub prev_value: Option<Bytes>,
    /// The create revision of the key's life this event belongs to.
    pub create_revision: Revision,
}

/// Options of [`Store::list`].
#[derive(Clone, Debug, Default)]
pub struct ListOptions {
    /// The revision to list at; `None` = latest.
    pub revision: Option<Revision>,
    /// Exclusive start key (pagination): only keys after it are returned.
    pub start_after: Option<String>,
    /// Most records to return; `None` or `Some(0)` = all.
    pub limit: Option<usize>,
}

/// One page of [`Store::list`].
#[derive(Clone, Debug)]
pub struct ListResult {
    /// The records, in key byte order.
    pub records: Vec<Record>,
    /// The snapshot revision the list was served at (pass it back as
    /// [`ListOptions::revision`] to page through the same snapshot).
    pub revision: Revision,
    /// Whether more matching keys follow this page.
    pub more: bool,
    /// How many more matching keys exist after this page (0 unless `more`).
    pub remaining: u64,
}
