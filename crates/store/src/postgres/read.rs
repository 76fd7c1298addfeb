//! Reads on a pooled PostgreSQL connection. Lists and log reads run in one `REPEATABLE READ`
//! read-only transaction, so the counters they check and the rows they return come from the
//! same snapshot.

use tokio_postgres::types::ToSql;
use tokio_postgres::{GenericClient, Row};

use super::conn::{decode_key, prepare, PgConn, PgError};
use crate::keys::Range;
use crate::sql;
use crate::{Error, Event, ListResult, Record, Result, Revision};

fn query_err(e: PgError) -> Error {
    Error::Query {
        source: Error::source_of(e),
    }
}

fn record(row: &Row) -> Result<Record> {
    let value: Vec<u8> = row.get(3);
    Ok(Record {
        key: decode_key(row.get(0))?,
        create_revision: row.get(1),
        mod_revision: row.get(2),
        value: value.into(),
    })
}

async fn counters<C: GenericClient>(tx: &C) -> Result<(Revision, Revision)> {
    let row = tx
        .query_one(&sql::counters(), &[])
        .await
        .map_err(query_err)?;
    Ok((row.get(0), row.get(1)))
}

pub(super) async fn get(conn: &mut PgConn, key: &str) -> Result<Option<Record>> {
    let stmt = conn.prepared(&sql::get('$')).await.map_err(query_err)?;
    let row = conn
        .client
        .query_opt(&stmt, &[&key.as_bytes()])
        .await
        .map_err(query_err)?;
    row.as_ref().map(record).transpose()
}

pub(super) async fn list(
    conn: &mut PgConn,
    range: &Range,
    revision: Option<Revision>,
    limit: Option<usize>,
) -> Result<ListResult> {
    let (tx, cache) = conn.begin(true).await.map_err(query_err)?;
    let (current, compacted) = counters(&tx).await?;
    let at = sql::snapshot_revision(revision, current, compacted)?;
    let historical = at < current;
    let q = sql::list_sql(range, '$', historical, limit.is_some());
    let bounds: Vec<&[u8]> = range.params().into_iter().map(str::as_bytes).collect();
    // One extra row tells whether another page follows.
    let probe = limit.map(|l| i64::try_from(l).unwrap_or(i64::MAX - 1) + 1);
    let mut args: Vec<&(dyn ToSql + Sync)> = bounds.iter().map(|b| b as _).collect();
    if historical {
        args.push(&at);
    }
    let count_args = args.clone();
    if let Some(p) = &probe {
        args.push(p);
    }
    let page = prepare(&tx, cache, &q.page).await.map_err(query_err)?;
    let rows = tx.query(&page, &args).await.map_err(query_err)?;
    let mut records = rows.iter().map(record).collect::<Result<Vec<_>>>()?;
    let more = sql::trim_page(&mut records, limit);
    let remaining = if more {
        let count = prepare(&tx, cache, &q.count).await.map_err(query_err)?;
        let total: i64 = tx
            .query_one(&count, &count_args)
            .await
            .map_err(query_err)?
            .get(0);
        u64::try_from(total)
            .unwrap_or(0)
            .saturating_sub(records.len() as u64)
    } else {
        0
    };
    tx.commit().await.map_err(query_err)?;
    Ok(ListResult {
        records,
        revision: at,
        more,
        remaining,
    })
}

/// The revision counter: the last revision committed by anyone.
pub(super) async fn revision(conn: &mut PgConn) -> Result<Revision> {
    let stmt = conn.prepared(&sql::revision()).await.map_err(query_err)?;
    let row = conn.client.query_one(&stmt, &[]).await.map_err(query_err)?;
    Ok(row.get(0))
}

pub(super) async fn events_after(
    conn: &mut PgConn,
    after: Revision,
    limit: usize,
) -> Result<Vec<Event>> {
    let (tx, cache) = conn.begin(true).await.map_err(query_err)?;
    let (_, compacted) = counters(&tx).await?;
    sql::log_readable(after, compacted)?;
    let stmt = prepare(&tx, cache, &sql::events_after('$'))
        .await
        .map_err(query_err)?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = tx
        .query(&stmt, &[&after, &limit])
        .await
        .map_err(query_err)?;
    tx.commit().await.map_err(query_err)?;
    decode_events(rows)
}

/// Event-log rows (selected as [`sql::EVENT_COLUMNS`]) back into events.
pub(super) fn decode_events(rows: Vec<Row>) -> Result<Vec<Event>> {
    rows.into_iter()
        .map(|row| {
            let revision: Revision = row.get(0);
            let kind = sql::event_kind(revision, row.get(2))?;
            let value: Vec<u8> = row.get(3);
            let prev: Option<Vec<u8>> = row.get(4);
            Ok(Event {
                revision,
                key: decode_key(row.get(1))?,
                kind,
                value: value.into(),
                prev_value: prev.map(Into::into),
                create_revision: row.get(5),
            })
        })
        .collect()
}
