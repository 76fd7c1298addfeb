//! Reads on a pooled read-only SQLite connection (run inside `spawn_blocking`). Lists and log
//! reads run in one read transaction, so the counters they check and the rows they return
//! come from the same snapshot.

use rusqlite::types::Value;
use rusqlite::{params_from_iter, Connection, OptionalExtension, Row};

use crate::keys::Range;
use crate::sql;
use crate::{Error, Event, ListResult, Record, Result, Revision};

fn query_err(e: rusqlite::Error) -> Error {
    Error::Query {
        source: Error::source_of(e),
    }
}

fn record(r: &Row<'_>) -> rusqlite::Result<Record> {
    Ok(Record {
        key: r.get(0)?,
        create_revision: r.get(1)?,
        mod_revision: r.get(2)?,
        value: r.get::<_, Vec<u8>>(3)?.into(),
    })
}

fn counters(conn: &Connection) -> Result<(Revision, Revision)> {
    conn.prepare_cached(&sql::counters())
        .and_then(|mut s| s.query_row([], |r| Ok((r.get(0)?, r.get(1)?))))
        .map_err(query_err)
}

pub(super) fn get(conn: &Connection, key: &str) -> Result<Option<Record>> {
    conn.prepare_cached(&sql::get('?'))
        .and_then(|mut s| s.query_row([key], record).optional())
        .map_err(query_err)
}

pub(super) fn list(
    conn: &mut Connection,
    range: &Range,
    revision: Option<Revision>,
    limit: Option<usize>,
) -> Result<ListResult> {
    let tx = conn.transaction().map_err(query_err)?;
    let (current, compacted) = counters(&tx)?;
    let at = sql::snapshot_revision(revision, current, compacted)?;
    let historical = at < current;
    let q = sql::list_sql(range, '?', historical, limit.is_some());
    let mut args: Vec<Value> = range
        .params()
        .into_iter()
        .map(|p| Value::Text(p.into()))
        .collect();
    if historical {
        args.push(Value::Integer(at));
    }
    let count_args = args.clone();
    if let Some(l) = limit {
        // One extra row tells whether another page follows.
        args.push(Value::Integer(i64::try_from(l).unwrap_or(i64::MAX - 1) + 1));
    }
    let mut records = tx
        .prepare_cached(&q.page)
        .and_then(|mut s| s.query_map(params_from_iter(args), record)?.collect())
        .map_err(query_err)?;
    let more = sql::trim_page(&mut records, limit);
    let remaining = if more {
        let total: i64 = tx
            .prepare_cached(&q.count)
            .and_then(|mut s| s.query_row(params_from_iter(count_args), |r| r.get(0)))
            .map_err(query_err)?;
        u64::try_from(total)
            .unwrap_or(0)
            .saturating_sub(records.len() as u64)
    } else {
        0
    };
    Ok(ListResult {
        records,
        revision: at,
        more,
        remaining,
    })
}

pub(super) fn events_after(
    conn: &mut Connection,
    after: Revision,
    limit: usize,
) -> Result<Vec<Event>> {
    let tx = conn.transaction().map_err(query_err)?;
    let (_, compacted) = counters(&tx)?;
    sql::log_readable(after, compacted)?;
    let mut stmt = tx
        .prepare_cached(&sql::events_after('?'))
        .map_err(query_err)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt
        .query_map([after, limit], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i16>(2)?,
                r.get::<_, Vec<u8>>(3)?,
                r.get::<_, Option<Vec<u8>>>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(query_err)?;
    rows.into_iter()
        .map(|(revision, key, kind, value, prev, create_revision)| {
            Ok(Event {
                revision,
                key,
                kind: sql::event_kind(revision, kind)?,
                value: value.into(),
                prev_value: prev.map(Into::into),
                create_revision,
            })
        })
        .collect()
}
