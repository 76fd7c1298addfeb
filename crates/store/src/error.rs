//! The store's one error type.
//!
//! The first five variants are the contract the API server maps to Kubernetes statuses
//! (409 AlreadyExists / 404 NotFound / 409 Conflict / 410 Gone / 504 Timeout). The others are
//! backend failures, each named after the step that failed and carrying its source. Sources are
//! behind an `Arc` because one failed group-commit transaction has to be reported to every
//! write request that was in it.

use std::sync::Arc;

use crate::{Record, Revision};

/// A backend error source shared between every request that one failure affects.
pub type Source = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// Everything that can go wrong in the store.
/// It is `Clone` because one failed group commit is reported to every write that was in it.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// `create` of a key that is already present.
    #[error("key {key:?} already exists")]
    AlreadyExists {
        /// The key that exists.
        key: String,
    },
    /// `update` or `delete` of a key that is absent.
    #[error("key {key:?} not found")]
    NotFound {
        /// The missing key.
        key: String,
    },
    /// The expected mod revision of `update` or `delete` did not match the stored one.
    #[error("key {key:?} was modified concurrently (expected mod revision did not match)")]
    Conflict {
        /// The key written.
        key: String,
        /// The record as it is now, so the caller can retry without another read.
        current: Option<Record>,
    },
    /// A list or watch asked for history that compaction has dropped.
    #[error("revision {requested} has been compacted (history starts after {compacted})")]
    Compacted {
        /// The revision asked for.
        requested: Revision,
        /// The revision history has been compacted to.
        compacted: Revision,
    },
    /// A list or compaction asked for a revision the store has not reached yet.
    #[error("revision {requested} is in the future (current revision is {current})")]
    FutureRevision {
        /// The revision asked for.
        requested: Revision,
        /// The store's last committed revision.
        current: Revision,
    },
    /// The store URL is neither `sqlite:PATH` nor `postgres://…`.
    #[error("unsupported store URL {url:?}: use sqlite:PATH, postgres://user:pw@host:port/db or memory:[NAME]")]
    ParseUrl {
        /// The URL given (passwords are not echoed: only the scheme part is kept).
        url: String,
    },
    /// Opening or configuring the SQLite database file failed.
    #[error("opening SQLite database {path}")]
    OpenSqlite {
        /// The database file.
        path: String,
        /// What SQLite said.
        #[source]
        source: Source,
    },
    /// The `postgres://` URL could not be read (its password is never echoed).
    #[error("invalid PostgreSQL URL: {detail}")]
    PostgresUrl {
        /// What is wrong with it.
        detail: String,
    },
    /// The TLS settings of the PostgreSQL URL (`sslrootcert`, `sslcert`, `sslkey`) could not be
    /// used.
    #[error("TLS to PostgreSQL at {host}: {what}")]
    PostgresTls {
        /// The server(s) the URL names, `host:port` (no user or password).
        host: String,
        /// Which setting failed and how.
        what: String,
        /// The underlying error.
        #[source]
        source: Source,
    },
    /// Connecting to PostgreSQL failed (refused, authentication, or a TLS handshake or
    /// certificate verification that failed).
    #[error("connecting to PostgreSQL at {host}")]
    ConnectPostgres {
        /// The server(s) the URL names, `host:port` (no user or password).
        host: String,
        /// What the driver said.
        #[source]
        source: Source,
    },
    /// Creating or checking the tables failed.
    #[error("creating or checking the store's tables")]
    Migrate {
        /// What the database said.
        #[source]
        source: Source,
    },
    /// A named in-memory database (`memory:NAME`) is already open in another store.
    #[error("the in-memory store {name:?} is open already; close it first")]
    MemoryInUse {
        /// The name after `memory:`.
        name: String,
    },
    /// The NATS connection replicas announce commits on cannot be set up.
    #[error("NATS: {detail}")]
    Nats {
        /// What went wrong.
        detail: String,
    },
    /// Starting the writer thread failed.
    #[error("starting the store's writer thread")]
    SpawnWriter {
        /// What the OS said.
        #[source]
        source: Source,
    },
    /// The group-commit transaction holding this write failed and was rolled back; the write
    /// did not happen.
    #[error("committing the write transaction")]
    CommitTxn {
        /// What the database said.
        #[source]
        source: Source,
    },
    /// The group-commit transaction holding this write failed because the database's disk (or
    /// its quota) is full, and was rolled back; the write did not happen. Writes succeed
    /// again once space is freed.
    #[error(
        "the database's disk is full; the write was rolled back (free space on the volume that \
         holds the database)"
    )]
    StorageFull {
        /// What the database said.
        #[source]
        source: Source,
    },
    /// The connection to the database was lost after the write transaction was sent to be
    /// committed, and could not be re-established to find out whether it was; or the write
    /// was handed to the hub replica that commits for all, and its answer never came. The
    /// write may or may not have happened; watchers are told if it did.
    #[error(
        "the connection to the database, or to the hub replica committing the write, was lost \
         while committing; whether the write happened is unknown (read the object again to \
         find out)"
    )]
    CommitUnknown {
        /// Why the outcome could not be learned.
        #[source]
        source: Source,
    },
    /// The transaction compacting history failed and was rolled back.
    #[error("compacting history")]
    CompactTxn {
        /// What the database said.
        #[source]
        source: Source,
    },
    /// A read (get, list, or the watch's replay of the event log) failed.
    #[error("reading from the store")]
    Query {
        /// What the database said.
        #[source]
        source: Source,
    },
    /// A stored row could not be decoded (the database holds something this code never wrote).
    #[error("stored row is corrupt: {detail}")]
    DecodeRow {
        /// What was wrong.
        detail: String,
    },
    /// The render callback of a write panicked; the write did not happen.
    #[error("rendering the value of {key:?} panicked")]
    RenderPanicked {
        /// The key written.
        key: String,
    },
    /// The store has been closed (or its writer died).
    #[error("the store is closed")]
    Closed,
}

/// The store's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub(crate) fn source_of<E: std::error::Error + Send + Sync + 'static>(e: E) -> Source {
        Arc::new(e)
    }
}
