//! The SQLite writer thread: the only connection that writes, committing queued writes in
//! groups (see [`crate::batch`]).

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};
use tokio::sync::oneshot;

use crate::backend::{Reporter, WriterEnd};
use crate::batch::{self, Op, Plan, Step};
use crate::sql::{self, META, OBJECTS};
use crate::{Error, Record, Result, Revision};

/// Run until every request sender is gone and the queue is drained.
pub(super) fn run(mut conn: Connection, end: WriterEnd) {
    let WriterEnd {
        mut requests,
        done,
        report,
    } = end;
    while let Some(first) = requests.blocking_recv() {
        for step in batch::steps(batch::drain(first, &mut requests)) {
            match step {
                Step::Writes(writes) => write_group(&mut conn, &report, writes),
                Step::Compact(revision, reply) => {
                    let _ = reply.send(compact(&mut conn, &report, revision));
                }
            }
        }
    }
    tracing::debug!("SQLite writer stopped");
    // Dropping `done` tells `close` the writer has finished; the connection closes with it.
    drop(conn);
    drop(done);
}

fn write_group(
    conn: &mut Connection,
    report: &Reporter,
    writes: Vec<(Op, oneshot::Sender<Result<Record>>)>,
) {
    let keys = batch::keys(&writes);
    let (ops, replies): (Vec<_>, Vec<_>) = writes.into_iter().unzip();
    let n = replies.len();
    match commit_group(conn, &keys, ops) {
        Ok(plan) => {
            let events = plan.log.into_iter().map(|e| e.event).collect();
            report.committed(plan.last, events);
            batch::answer(replies, plan.results);
        }
        Err(e) => {
            tracing::error!(error = %e, writes = n, "SQLite write transaction failed; rolled back");
            let full = e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull);
            let source = Error::source_of(e);
            let err = if full {
                Error::StorageFull { source }
            } else {
                Error::CommitTxn { source }
            };
            batch::answer(replies, vec![Err(err); n]);
        }
    }
}

fn commit_group(conn: &mut Connection, keys: &[String], ops: Vec<Op>) -> rusqlite::Result<Plan> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Read the counter inside the transaction rather than trusting memory, so a second process
    // writing the same file makes this commit fail instead of reusing revisions.
    let base: Revision = tx
        .prepare_cached(&sql::revision())?
        .query_row([], |r| r.get(0))?;
    let mut current = HashMap::with_capacity(keys.len());
    {
        let mut get = tx.prepare_cached(&sql::get('?'))?;
        for key in keys {
            let row = get
                .query_row([key], |r| {
                    Ok(Record {
                        key: key.clone(),
                        create_revision: r.get(1)?,
                        mod_revision: r.get(2)?,
                        value: r.get::<_, Vec<u8>>(3)?.into(),
                    })
                })
                .optional()?;
            if let Some(rec) = row {
                current.insert(key.clone(), rec);
            }
        }
    }
    let plan = batch::plan(base, ops, current);
    if plan.log.is_empty() {
        // Every write failed its precondition: nothing to commit.
        return Ok(plan);
    }
    {
        let mut upsert = tx.prepare_cached(&sql::upsert("VALUES (?1, ?2, ?3, ?4)"))?;
        let mut delete = tx.prepare_cached(&format!("DELETE FROM {OBJECTS} WHERE key = ?1"))?;
        for (key, row) in &plan.rows {
            match row {
                Some(r) => upsert.execute(params![
                    key,
                    r.create_revision,
                    r.mod_revision,
                    &r.value[..]
                ])?,
                None => delete.execute([key])?,
            };
        }
        let mut log = tx.prepare_cached(&sql::log("VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"))?;
        for entry in &plan.log {
            let e = &entry.event;
            log.execute(params![
                e.revision,
                e.key,
                sql::kind_code(e.kind),
                &e.value[..],
                e.prev_value.as_deref(),
                entry.prev_mod_revision,
                e.create_revision
            ])?;
        }
        tx.prepare_cached(&format!("UPDATE {META} SET revision = ?1 WHERE id = 1"))?
            .execute([plan.last])?;
    }
    tx.commit()?;
    Ok(plan)
}

fn compact(conn: &mut Connection, report: &Reporter, revision: Revision) -> Result<()> {
    let txn_err = |e| Error::CompactTxn {
        source: Error::source_of(e),
    };
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(txn_err)?;
    let (current, compacted): (Revision, Revision) = tx
        .query_row(&sql::counters(), [], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(txn_err)?;
    if !sql::compaction_due(revision, current, compacted)? {
        return Ok(());
    }
    let dropped = tx
        .execute(&sql::drop_events('?'), [revision])
        .map_err(txn_err)?;
    tx.execute(&sql::set_compacted('?'), [revision])
        .map_err(txn_err)?;
    tx.commit().map_err(txn_err)?;
    report.compacted_to(revision);
    tracing::debug!(revision, dropped, "compacted SQLite event log");
    Ok(())
}
