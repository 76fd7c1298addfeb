//! SQL both backends share, written once: table and column names, the statements that differ
//! only in how placeholders are written (`?N` in SQLite, `$N` in PostgreSQL: the `mark`
//! argument), the list queries, and the checks both run on the counters they read.
//!
//! What stays in a backend is what its dialect or driver needs: the table definitions (column
//! types), how a group of rows is written (SQLite binds one row per statement, PostgreSQL
//! `UNNEST`s arrays: the `rows` argument of [`upsert`] and [`log`]), and row decoding.
//!
//! # Listing at an older revision R
//! A key's state at R is its current row if that row's `mod_revision <= R`. Otherwise the key
//! changed after R, and its state at R is what the *earliest* event after R replaced: that
//! event's `prev_value` (with `prev_mod_revision` and the event's `create_revision`), or
//! nothing when that event was a create (`prev_value IS NULL`). The two halves are disjoint,
//! so a `UNION ALL` ordered by key is the snapshot. All events after R are still in the log
//! because lists below the compacted revision are refused.

use crate::keys::Range;
use crate::{Error, EventKind, Result, Revision};

/// Current objects: `(key PK, create_revision, mod_revision, value)`.
pub(crate) const OBJECTS: &str = "flotilla_objects";
/// The event log: `(revision PK, key, kind, value, prev_value, prev_mod_revision,
/// create_revision)`. Deliberately no index on `key`: it would cost every write another
/// B-tree insert (a fifth of SQLite's write throughput), while the only query that could use
/// it, a list at an older revision R, scans the log from R by primary key instead, which is
/// bounded by what was written since R (and by compaction).
pub(crate) const EVENTS: &str = "flotilla_events";
/// One row: `(id = 1, revision, compacted)`.
pub(crate) const META: &str = "flotilla_meta";

/// `kind` column values.
const KIND_PUT: i16 = 0;
const KIND_DELETE: i16 = 1;

/// A record row, in the order both backends decode it.
pub(crate) const RECORD_COLUMNS: &str = "key, create_revision, mod_revision, value";
/// An event row as read back, in the order both backends decode it.
pub(crate) const EVENT_COLUMNS: &str = "revision, key, kind, value, prev_value, create_revision";
/// An event row as written.
const LOG_COLUMNS: &str =
    "revision, key, kind, value, prev_value, prev_mod_revision, create_revision";

// === statements ===

/// The counters: `(revision, compacted)`.
pub(crate) fn counters() -> String {
    format!("SELECT revision, compacted FROM {META} WHERE id = 1")
}

/// The revision counter alone.
pub(crate) fn revision() -> String {
    format!("SELECT revision FROM {META} WHERE id = 1")
}

/// One object by key (placeholder 1), as a record row.
pub(crate) fn get(mark: char) -> String {
    format!("SELECT {RECORD_COLUMNS} FROM {OBJECTS} WHERE key = {mark}1")
}

/// Events after revision `mark1`, at most `mark2` of them, as event rows in revision order.
pub(crate) fn events_after(mark: char) -> String {
    format!(
        "SELECT {EVENT_COLUMNS} FROM {EVENTS} WHERE revision > {mark}1 ORDER BY revision \
         LIMIT {mark}2"
    )
}

/// Writes objects given as record rows by `rows` (a `VALUES` list or a `SELECT`), replacing
/// what is stored under their keys.
pub(crate) fn upsert(rows: &str) -> String {
    format!(
        "INSERT INTO {OBJECTS} ({RECORD_COLUMNS}) {rows} \
         ON CONFLICT (key) DO UPDATE SET create_revision = excluded.create_revision, \
           mod_revision = excluded.mod_revision, value = excluded.value"
    )
}

/// Appends events given by `rows` (a `VALUES` list or a `SELECT`) in the order
/// `revision, key, kind, value, prev_value, prev_mod_revision, create_revision`.
pub(crate) fn log(rows: &str) -> String {
    format!("INSERT INTO {EVENTS} ({LOG_COLUMNS}) {rows}")
}

/// Drops the log up to revision `mark1` (compaction).
pub(crate) fn drop_events(mark: char) -> String {
    format!("DELETE FROM {EVENTS} WHERE revision <= {mark}1")
}

/// Records that the log is compacted to revision `mark1`.
pub(crate) fn set_compacted(mark: char) -> String {
    format!("UPDATE {META} SET compacted = {mark}1 WHERE id = 1")
}

/// The `kind` column value of an event kind.
pub(crate) fn kind_code(kind: EventKind) -> i16 {
    match kind {
        EventKind::Put => KIND_PUT,
        EventKind::Delete => KIND_DELETE,
    }
}

/// An event kind back from its `kind` column value (`revision` names the event in the error).
pub(crate) fn event_kind(revision: Revision, code: i16) -> Result<EventKind> {
    match code {
        KIND_PUT => Ok(EventKind::Put),
        KIND_DELETE => Ok(EventKind::Delete),
        other => Err(Error::DecodeRow {
            detail: format!("event {revision} has unknown kind {other}"),
        }),
    }
}

/// The queries of one list, with their placeholders numbered: the range bounds first (see
/// [`Range::params`]), then the snapshot revision when historical, then the row limit
/// (`page` only).
pub(crate) struct ListSql {
    /// Rows `(key, create_revision, mod_revision, value)` in key order.
    pub page: String,
    /// `COUNT(*)` of everything `page` would return without its limit.
    pub count: String,
}

pub(crate) fn list_sql(range: &Range, mark: char, historical: bool, limited: bool) -> ListSql {
    let n = range.params().len();
    let cond = range.sql("key", mark, 1);
    let body = if historical {
        let at = format!("{mark}{}", n + 1);
        format!(
            "SELECT {RECORD_COLUMNS} FROM {OBJECTS} \
               WHERE {cond} AND mod_revision <= {at} \
             UNION ALL \
             SELECT e.key, e.create_revision, e.prev_mod_revision, e.prev_value FROM {EVENTS} e \
               JOIN (SELECT MIN(revision) AS first FROM {EVENTS} \
                       WHERE {cond} AND revision > {at} GROUP BY key) f \
                 ON e.revision = f.first \
               WHERE e.prev_value IS NOT NULL"
        )
    } else {
        format!("SELECT {RECORD_COLUMNS} FROM {OBJECTS} WHERE {cond}")
    };
    let limit_mark = n + 1 + usize::from(historical);
    let limit = if limited {
        format!(" LIMIT {mark}{limit_mark}")
    } else {
        String::new()
    };
    ListSql {
        page: format!(
            "SELECT {RECORD_COLUMNS} FROM ({body}) AS snapshot \
             ORDER BY key{limit}"
        ),
        count: format!("SELECT COUNT(*) FROM ({body}) AS snapshot"),
    }
}

// === checks on the counters ===

/// Check a requested list revision against the snapshot's counters; the revision to list at.
pub(crate) fn snapshot_revision(
    requested: Option<Revision>,
    current: Revision,
    compacted: Revision,
) -> Result<Revision> {
    match requested {
        None => Ok(current),
        Some(r) if r > current => Err(Error::FutureRevision {
            requested: r,
            current,
        }),
        Some(r) if r < compacted => Err(Error::Compacted {
            requested: r,
            compacted,
        }),
        Some(r) => Ok(r),
    }
}

/// Check a compaction to `revision` against the counters read in its transaction: whether
/// there is anything to drop (a revision already compacted is done; a future one is refused).
pub(crate) fn compaction_due(
    revision: Revision,
    current: Revision,
    compacted: Revision,
) -> Result<bool> {
    if revision > current {
        return Err(Error::FutureRevision {
            requested: revision,
            current,
        });
    }
    Ok(revision > compacted)
}

/// Check a log read after revision `after` against the compacted revision.
pub(crate) fn log_readable(after: Revision, compacted: Revision) -> Result<()> {
    if after < compacted {
        return Err(Error::Compacted {
            requested: after,
            compacted,
        });
    }
    Ok(())
}

// === pages ===

/// Turn `limit + 1` fetched rows into a page: trims the probe row and says whether more follow.
pub(crate) fn trim_page<T>(rows: &mut Vec<T>, limit: Option<usize>) -> bool {
    match limit {
        Some(l) if rows.len() > l => {
            rows.truncate(l);
            true
        }
        _ => false,
    }
}
