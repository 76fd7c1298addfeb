//! SQL both backends share: table names and the list queries, which differ only in how
//! placeholders are written (`?N` in SQLite, `$N` in PostgreSQL).
//!
//! # Listing at an older revision R
//! A key's state at R is its current row if that row's `mod_revision <= R`. Otherwise the key
//! changed after R, and its state at R is what the *earliest* event after R replaced: that
//! event's `prev_value` (with `prev_mod_revision` and the event's `create_revision`), or
//! nothing when that event was a create (`prev_value IS NULL`). The two halves are disjoint,
//! so a `UNION ALL` ordered by key is the snapshot. All events after R are still in the log
//! because lists below the compacted revision are refused.

use crate::keys::Range;

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
pub(crate) const KIND_PUT: i16 = 0;
pub(crate) const KIND_DELETE: i16 = 1;

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
            "SELECT key, create_revision, mod_revision, value FROM {OBJECTS} \
               WHERE {cond} AND mod_revision <= {at} \
             UNION ALL \
             SELECT e.key, e.create_revision, e.prev_mod_revision, e.prev_value FROM {EVENTS} e \
               JOIN (SELECT MIN(revision) AS first FROM {EVENTS} \
                       WHERE {cond} AND revision > {at} GROUP BY key) f \
                 ON e.revision = f.first \
               WHERE e.prev_value IS NOT NULL"
        )
    } else {
        format!("SELECT key, create_revision, mod_revision, value FROM {OBJECTS} WHERE {cond}")
    };
    let limit_mark = n + 1 + usize::from(historical);
    let limit = if limited {
        format!(" LIMIT {mark}{limit_mark}")
    } else {
        String::new()
    };
    ListSql {
        page: format!(
            "SELECT key, create_revision, mod_revision, value FROM ({body}) AS snapshot \
             ORDER BY key{limit}"
        ),
        count: format!("SELECT COUNT(*) FROM ({body}) AS snapshot"),
    }
}

/// Check a requested list revision against the snapshot's counters; the revision to list at.
pub(crate) fn snapshot_revision(
    requested: Option<crate::Revision>,
    current: crate::Revision,
    compacted: crate::Revision,
) -> crate::Result<crate::Revision> {
    match requested {
        None => Ok(current),
        Some(r) if r > current => Err(crate::Error::FutureRevision {
            requested: r,
            current,
        }),
        Some(r) if r < compacted => Err(crate::Error::Compacted {
            requested: r,
            compacted,
        }),
        Some(r) => Ok(r),
    }
}

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
