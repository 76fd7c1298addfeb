//! The PostgreSQL writer task: group commit (see [`crate::batch`]) in a handful of round
//! trips per group, whatever its size.
//!
//! Each group's transaction first locks the meta row (`SELECT … FOR UPDATE`). That lock
//! serializes every writer sharing the database, including other hub replicas later, so:
//! revisions are allocated without gaps, commits land in revision order (what a log tailer
//! needs), and the rows read after taking it are the latest, which lets preconditions be
//! checked in memory. No statement in the transaction can fail on a precondition, so one bad
//! write never aborts its neighbours. Rows are written with `UNNEST` over arrays: one
//! statement per table per group.
//!
//! If the connection is lost while COMMIT is on its way, the group's outcome is unknown: the
//! writer settles it by reading the database again before anything else ([`super::settle`]),
//! and hands watchers whatever committed.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio_postgres::types::ToSql;
use tokio_postgres::Statement;

use super::conn::{decode_key, PgConn, PgError, Target};
use super::peers::{self, Announcer};
use super::settle::{self, Feed};
use crate::backend::{Reporter, WriterEnd};
use crate::batch::{self, Op, Plan, Step};
use crate::sql::{self, OBJECTS, RECORD_COLUMNS};
use crate::{Error, Event, Record, Result, Revision};

/// How many times a replica's writer yields to other tasks before draining a group.
const GATHER_YIELDS: usize = 4;

/// Run until every request sender is gone and the queue is drained. `revision` is the last
/// revision committed when the store opened.
pub(super) async fn run(
    mut conn: PgConn,
    target: Target,
    end: WriterEnd,
    revision: Revision,
    announcer: Option<Announcer>,
) {
    let WriterEnd {
        mut requests,
        done,
        report,
    } = end;
    let mut feed = Feed::new(report, revision);
    loop {
        let next = if feed.unsettled {
            // Watchers may be missing committed revisions: keep trying to deliver them even
            // when no write comes to prompt it.
            tokio::select! {
                r = requests.recv() => r,
                () = tokio::time::sleep(settle::RETRY) => {
                    let _ = feed.catch_up(&mut conn, &target).await;
                    continue;
                }
            }
        } else {
            requests.recv().await
        };
        let Some(first) = next else { break };
        if announcer.is_some() {
            // A replica's writes arrive from many tasks (its own requests, and as the writer
            // of record the other replicas' hand-offs, each answered by a task of its own):
            // let those already running hand theirs in before the group is drained, as
            // PostgreSQL's commit_delay does, but without a timer. Measured with bench ha:
            // 12.8 instead of 7.8 writes per transaction on one replica, 5.7 instead of 4.1 on
            // three (fewer transactions and WAL flushes), creates/s within run-to-run noise.
            for _ in 0..GATHER_YIELDS {
                tokio::task::yield_now().await;
            }
        }
        for step in batch::steps(batch::drain(first, &mut requests)) {
            // Nothing new is written before watchers have had everything already committed.
            let ready = match conn.ensure_open(&target).await {
                Ok(()) if feed.unsettled => feed.catch_up(&mut conn, &target).await.map(drop),
                r => r,
            };
            match step {
                Step::Writes(writes) => match ready {
                    Ok(()) => {
                        write_group(&mut conn, &target, &mut feed, writes, announcer.as_ref())
                            .await;
                    }
                    Err(e) => {
                        let (_, replies): (Vec<_>, Vec<_>) = writes.into_iter().unzip();
                        let n = replies.len();
                        batch::answer(replies, vec![Err(e); n]);
                    }
                },
                Step::Compact(revision, reply) => {
                    let result = match ready {
                        Ok(()) => compact(&mut conn, feed.reporter(), revision).await,
                        Err(e) => Err(e),
                    };
                    let _ = reply.send(result);
                }
            }
        }
    }
    tracing::debug!("PostgreSQL writer stopped");
    drop(conn);
    drop(done);
}

/// Commit one group; with an `announcer`, announce what it (knowingly) committed, if anything,
/// to the other replicas ([`peers`](super::peers)): before the writes are answered, so that a
/// replica that handed a write on has the announcement before the answer.
async fn write_group(
    conn: &mut PgConn,
    target: &Target,
    feed: &mut Feed,
    writes: Vec<(Op, oneshot::Sender<Result<Record>>)>,
    announcer: Option<&Announcer>,
) {
    let keys = batch::keys(&writes);
    let (ops, replies): (Vec<_>, Vec<_>) = writes.into_iter().unzip();
    let n = replies.len();
    match commit_group(conn, &keys, ops).await {
        Ok(plan) => {
            let events: Vec<Event> = plan.log.into_iter().map(|e| e.event).collect();
            if let Some(a) = announcer.filter(|_| !events.is_empty()) {
                a.publish(peers::announcement(plan.last, &events)).await;
            }
            feed.committed(plan.last, events);
            batch::answer(replies, plan.results);
        }
        Err(Failed::RolledBack(e)) => {
            tracing::error!(error = %e, writes = n, "PostgreSQL write transaction failed; rolled back");
            batch::answer(replies, vec![Err(e); n]);
        }
        Err(Failed::Unknown { plan, error }) => {
            tracing::warn!(
                host = %target.host,
                error = %error,
                writes = n,
                "the connection to PostgreSQL was lost while committing; checking whether the \
                 transaction committed"
            );
            let results = match feed.settle(conn, target).await {
                Ok(events) if settle::committed(&plan, &events) => {
                    tracing::info!(revision = plan.last, "the lost commit had committed");
                    // Only its revision: the others read it from the log.
                    if let Some(a) = announcer {
                        a.publish(peers::announcement(plan.last, &[])).await;
                    }
                    plan.results
                }
                Ok(_) => {
                    tracing::info!("the lost commit had rolled back");
                    vec![Err(commit_err(error)); n]
                }
                Err(e) => {
                    tracing::error!(
                        error = %e,
                        writes = n,
                        "PostgreSQL is unreachable: the outcome of the lost commit is unknown; \
                         watchers get its revisions if it committed once the database answers"
                    );
                    let unknown = Error::CommitUnknown {
                        source: Arc::new(e),
                    };
                    vec![Err(unknown); n]
                }
            };
            batch::answer(replies, results);
        }
    }
}

/// Why a group did not (knowingly) commit.
enum Failed {
    /// It rolled back; nothing was written.
    RolledBack(Error),
    /// COMMIT was sent and no answer came back.
    Unknown { plan: Plan, error: PgError },
}

impl From<Error> for Failed {
    fn from(e: Error) -> Failed {
        Failed::RolledBack(e)
    }
}

/// The writer's statements.
struct Statements {
    lock: Statement,
    select: Statement,
    upsert: Statement,
    delete: Statement,
    log: Statement,
    bump: Statement,
}

/// Prepared once per connection (later calls hit the connection's cache).
async fn statements(conn: &mut PgConn) -> Result<Statements, PgError> {
    Ok(Statements {
        lock: conn
            .prepared(&format!("{} FOR UPDATE", sql::revision()))
            .await?,
        select: conn
            .prepared(&format!(
                "SELECT {RECORD_COLUMNS} FROM {OBJECTS} WHERE key = ANY($1)"
            ))
            .await?,
        upsert: conn
            .prepared(&sql::upsert(
                "SELECT * FROM UNNEST($1::BYTEA[], $2::BIGINT[], $3::BIGINT[], $4::BYTEA[])",
            ))
            .await?,
        delete: conn
            .prepared(&format!("DELETE FROM {OBJECTS} WHERE key = ANY($1)"))
            .await?,
        log: conn
            .prepared(&sql::log(
                "SELECT * FROM UNNEST($1::BIGINT[], $2::BYTEA[], $3::SMALLINT[], $4::BYTEA[], \
                                      $5::BYTEA[], $6::BIGINT[], $7::BIGINT[])",
            ))
            .await?,
        bump: conn
            .prepared(&format!(
                // The counter must still be the base read under the lock; if not (it cannot
                // move while the lock is held), NULL breaks NOT NULL and the transaction aborts.
                "UPDATE {} SET revision = CASE WHEN revision = $2 THEN revision + $1 END \
                 WHERE id = 1 RETURNING revision",
                sql::META
            ))
            .await?,
    })
}

fn commit_err(e: PgError) -> Error {
    // 53100 disk_full (also what a full tablespace gives); 53400 configuration_limit_exceeded
    // is not space.
    let full = e.code() == Some(&tokio_postgres::error::SqlState::DISK_FULL);
    let source = Error::source_of(e);
    if full {
        Error::StorageFull { source }
    } else {
        Error::CommitTxn { source }
    }
}

/// End a transaction that cannot commit (releasing the lock); the connection is reopened
/// later if this fails too.
async fn abandon(conn: &PgConn) {
    if let Err(e) = conn.client.batch_execute("ROLLBACK").await {
        tracing::debug!(error = %e, "rolling back an abandoned write transaction");
    }
}

/// One group in one transaction, in two round trips: BEGIN, the meta row lock and the rows'
/// current state pipelined; then every write, the counter's bump and COMMIT pipelined. The
/// lock is held for those two round trips only. A statement that fails makes the server end
/// the transaction at the COMMIT as a rollback; a connection lost in the second round trip
/// leaves the outcome unknown (settled by the caller).
async fn commit_group(conn: &mut PgConn, keys: &[String], ops: Vec<Op>) -> Result<Plan, Failed> {
    let Statements {
        lock,
        select,
        upsert,
        delete,
        log,
        bump,
    } = statements(conn).await.map_err(commit_err)?;
    let client = &conn.client;
    let key_bytes: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
    let select_params: [&(dyn ToSql + Sync); 1] = [&key_bytes];
    // Pipelined; the server runs them in order, so the rows are read under the lock.
    let begun = futures::try_join!(
        client.batch_execute("BEGIN"),
        client.query_one(&lock, &[]),
        client.query(&select, &select_params)
    );
    let (_, locked, rows) = match begun {
        Ok(v) => v,
        Err(e) => {
            abandon(conn).await;
            return Err(Failed::RolledBack(commit_err(e)));
        }
    };
    let base: Revision = locked.get(0);
    let mut current = HashMap::with_capacity(keys.len());
    for row in rows {
        let key = match decode_key(row.get(0)) {
            Ok(k) => k,
            Err(e) => {
                abandon(conn).await;
                return Err(Failed::RolledBack(e));
            }
        };
        let value: Vec<u8> = row.get(3);
        let rec = Record {
            key: key.clone(),
            create_revision: row.get(1),
            mod_revision: row.get(2),
            value: value.into(),
        };
        current.insert(key, rec);
    }
    let plan = batch::plan(base, ops, current);
    if plan.log.is_empty() {
        // Every write failed its precondition; rolling back releases the lock.
        client.batch_execute("ROLLBACK").await.map_err(commit_err)?;
        return Ok(plan);
    }

    let (mut up_keys, mut up_creates, mut up_mods, mut up_values) =
        (vec![], vec![], vec![], vec![]);
    let mut gone: Vec<&[u8]> = vec![];
    for (key, row) in &plan.rows {
        match row {
            Some(r) => {
                up_keys.push(key.as_bytes());
                up_creates.push(r.create_revision);
                up_mods.push(r.mod_revision);
                up_values.push(&r.value[..]);
            }
            None => gone.push(key.as_bytes()),
        }
    }
    let mut revs = Vec::with_capacity(plan.log.len());
    let (mut keys, mut kinds, mut values, mut prevs, mut prev_mods, mut creates) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for entry in &plan.log {
        let e = &entry.event;
        revs.push(e.revision);
        keys.push(e.key.as_bytes());
        kinds.push(sql::kind_code(e.kind));
        values.push(&e.value[..]);
        prevs.push(e.prev_value.as_deref());
        prev_mods.push(entry.prev_mod_revision);
        creates.push(e.create_revision);
    }
    let n = plan.last - base;
    let up_params: [&(dyn ToSql + Sync); 4] = [&up_keys, &up_creates, &up_mods, &up_values];
    let gone_params: [&(dyn ToSql + Sync); 1] = [&gone];
    let log_params: [&(dyn ToSql + Sync); 7] =
        [&revs, &keys, &kinds, &values, &prevs, &prev_mods, &creates];
    let bump_params: [&(dyn ToSql + Sync); 2] = [&n, &base];
    // Issued together, in this order, the statements are pipelined: one round trip.
    let (bumped, upserted, deleted, logged, committed) = futures::join!(
        client.query_one(&bump, &bump_params),
        async {
            if up_keys.is_empty() {
                return Ok(0);
            }
            client.execute(&upsert, &up_params).await
        },
        async {
            if gone.is_empty() {
                return Ok(0);
            }
            client.execute(&delete, &gone_params).await
        },
        client.execute(&log, &log_params),
        client.batch_execute("COMMIT"),
    );
    let (bumped, e1) = split(bumped);
    let (_, e2) = split(upserted);
    let (_, e3) = split(deleted);
    let (logged, e4) = split(logged);
    let (_, e5) = split(committed);
    let mut errors = [e1, e2, e3, e4, e5];
    // A lost connection anywhere in the round trip: the COMMIT may have been run.
    let lost = errors
        .iter()
        .position(|e| e.as_ref().is_some_and(settle::outcome_unknown));
    if let Some(error) = lost.and_then(|i| errors[i].take()) {
        return Err(Failed::Unknown { plan, error });
    }
    // The server answered, and a statement failed: its COMMIT ended the transaction as a
    // rollback.
    if let Some(e) = errors.into_iter().flatten().next() {
        return Err(Failed::RolledBack(commit_err(e)));
    }
    if let (Some(last), Some(logged)) = (bumped, logged) {
        let last: Revision = last.get(0);
        if last != plan.last || logged != plan.log.len() as u64 {
            // The bump refuses a moved counter, so this cannot happen; say so if it does.
            tracing::error!(
                last,
                expected = plan.last,
                logged,
                "PostgreSQL commit wrote other counts than planned"
            );
        }
    }
    Ok(plan)
}

/// A result as its value and its error.
fn split<T>(r: Result<T, PgError>) -> (Option<T>, Option<PgError>) {
    match r {
        Ok(v) => (Some(v), None),
        Err(e) => (None, Some(e)),
    }
}

async fn compact(conn: &mut PgConn, report: &Reporter, revision: Revision) -> Result<()> {
    let txn_err = |e| Error::CompactTxn {
        source: Error::source_of(e),
    };
    let tx = conn.client.transaction().await.map_err(txn_err)?;
    let row = tx
        .query_one(&format!("{} FOR UPDATE", sql::counters()), &[])
        .await
        .map_err(txn_err)?;
    let (current, compacted): (Revision, Revision) = (row.get(0), row.get(1));
    if !sql::compaction_due(revision, current, compacted)? {
        return Ok(());
    }
    let dropped = tx
        .execute(&sql::drop_events('$'), &[&revision])
        .await
        .map_err(txn_err)?;
    tx.execute(&sql::set_compacted('$'), &[&revision])
        .await
        .map_err(txn_err)?;
    tx.commit().await.map_err(txn_err)?;
    report.compacted_to(revision);
    tracing::debug!(revision, dropped, "compacted PostgreSQL event log");
    Ok(())
}
