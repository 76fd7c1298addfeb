//! Opening SQLite connections and creating the tables.
//!
//! Durability: the database runs in WAL mode. With [`Durability::Full`] (the default) it runs
//! `synchronous=FULL`: each commit flushes the WAL (fsync) before returning, so an acknowledged
//! write survives power loss; the writer commits queued writes in groups, so concurrent writes
//! share one flush. With [`Durability::Relaxed`] it runs `synchronous=NORMAL`: a commit appends
//! to the WAL with a plain `write()`, so an acknowledged write survives the process being
//! killed (`kill -9`, a panic, OOM) but an OS crash or power loss can drop the last commits
//! (fsync happens at checkpoints); the database stays consistent either way.

use rusqlite::{Connection, OpenFlags};

use crate::sql::{EVENTS, META, OBJECTS};
use crate::{Durability, Error, Result, Revision};

/// Bumped when the tables change shape; stored in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 1;

fn open_err(path: &str) -> impl Fn(rusqlite::Error) -> Error + '_ {
    move |e| Error::OpenSqlite {
        path: path.to_owned(),
        source: Error::source_of(e),
    }
}

fn migrate_err(e: rusqlite::Error) -> Error {
    Error::Migrate {
        source: Error::source_of(e),
    }
}

/// Open the writer's connection (creating the file), set it up, create the tables, and return
/// it with the stored `(revision, compacted)` counters.
pub(super) fn open_writer(
    path: &str,
    durability: Durability,
) -> Result<(Connection, Revision, Revision)> {
    let conn = Connection::open(path).map_err(open_err(path))?;
    // `journal_mode` answers with a row, so it is read rather than executed.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(open_err(path))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(
            path,
            mode,
            "SQLite refused WAL mode; reads will wait for writes"
        );
    }
    let synchronous = match durability {
        Durability::Full => "FULL",
        Durability::Relaxed => "NORMAL",
    };
    // The writer's page cache: 8 MiB holds the B-trees' inner pages; leaves it misses come
    // from the kernel's page cache. At 32 MiB it filled with the event log's pages (a
    // thousand members' Lease renewals) and was a tenth of an idle hub's memory.
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {synchronous};
         PRAGMA busy_timeout = 5000;
         PRAGMA cache_size = -8192;
         PRAGMA temp_store = MEMORY;
         PRAGMA wal_autocheckpoint = 10000;
         PRAGMA journal_size_limit = 67108864;"
    ))
    .map_err(open_err(path))?;
    conn.set_prepared_statement_cache_capacity(64);
    migrate(&conn)?;
    let (revision, compacted) = conn
        .query_row(&crate::sql::counters(), [], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(migrate_err)?;
    Ok((conn, revision, compacted))
}

fn migrate(conn: &Connection) -> Result<()> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(migrate_err)?;
    if version > SCHEMA_VERSION {
        tracing::warn!(
            version,
            ours = SCHEMA_VERSION,
            "database was written by a newer flotilla"
        );
    }
    conn.execute_batch(&format!(
        "BEGIN;
         CREATE TABLE IF NOT EXISTS {OBJECTS} (
             key TEXT PRIMARY KEY NOT NULL,
             create_revision INTEGER NOT NULL,
             mod_revision INTEGER NOT NULL,
             value BLOB NOT NULL
         );
         CREATE TABLE IF NOT EXISTS {EVENTS} (
             revision INTEGER PRIMARY KEY,
             key TEXT NOT NULL,
             kind INTEGER NOT NULL,
             value BLOB NOT NULL,
             prev_value BLOB,
             prev_mod_revision INTEGER,
             create_revision INTEGER NOT NULL
         );
         CREATE TABLE IF NOT EXISTS {META} (
             id INTEGER PRIMARY KEY CHECK (id = 1),
             revision INTEGER NOT NULL,
             compacted INTEGER NOT NULL
         );
         INSERT OR IGNORE INTO {META} (id, revision, compacted) VALUES (1, 0, 0);
         PRAGMA user_version = {SCHEMA_VERSION};
         COMMIT;"
    ))
    .map_err(migrate_err)
}

/// Open the background checkpoint thread's connection (see [`super::checkpoint`]).
pub(super) fn open_checkpointer(path: &str) -> Result<Connection> {
    let conn = Connection::open(path).map_err(open_err(path))?;
    conn.execute_batch("PRAGMA busy_timeout = 5000;")
        .map_err(open_err(path))?;
    Ok(conn)
}

/// Open a read-only connection; WAL lets it read beside the writer.
pub(super) fn open_reader(path: &str) -> Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).map_err(open_err(path))?;
    conn.execute_batch("PRAGMA busy_timeout = 5000;")
        .map_err(open_err(path))?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `PRAGMA synchronous` of the writer: 2 is FULL (a flush per commit), 1 is NORMAL.
    fn synchronous(durability: Durability) -> i64 {
        let dir = tempfile::tempdir().expect("temporary directory");
        let path = dir.path().join("store.db");
        let (conn, _, _) =
            open_writer(path.to_str().expect("utf-8 path"), durability).expect("open the writer");
        conn.query_row("PRAGMA synchronous", [], |r| r.get(0))
            .expect("read PRAGMA synchronous")
    }

    #[test]
    fn full_durability_flushes_each_commit_and_relaxed_does_not() {
        assert_eq!(synchronous(Durability::Full), 2, "FULL by default");
        assert_eq!(Durability::default(), Durability::Full);
        assert_eq!(synchronous(Durability::Relaxed), 1, "NORMAL when relaxed");
    }
}
