//! Commits whose outcome was lost with the connection, and the watch feed that must not lose
//! them.
//!
//! When the connection drops after COMMIT was sent, the transaction may have committed or
//! not, and nothing on this side can tell. Its revisions, if it did, are in the database but
//! were never handed to watchers; the next group would then be broadcast after a hole. So the
//! writer's [`Feed`] remembers the last revision it gave watchers, and after such a loss
//! [`Feed::catch_up`] reads the database again: it takes the meta row lock (which the lost
//! transaction held until it ended, so once we have it that transaction has committed or
//! rolled back for good), reads every logged event after the last one given out, and hands
//! them to watchers. Whether the lost group is among them answers its writers truthfully.
//! Until a catch-up succeeds the writer runs none of its queued work and retries on a timer,
//! so watchers get the revisions as soon as the database answers, even with no new writes.

use std::time::Duration;

use tokio_postgres::error::SqlState;

use super::conn::{PgConn, PgError, Target};
use super::read::decode_events;
use crate::backend::Reporter;
use crate::batch::Plan;
use crate::sql::{self, EVENTS, EVENT_COLUMNS};
use crate::{Error, Event, Result, Revision};

/// How long a catch-up waits for the meta row lock (a lost transaction still finishing on the
/// server holds it) before it gives up and is retried.
const LOCK_WAIT: &str = "5s";
/// Pauses between catch-up attempts right after a lost commit, before its writers are told
/// the outcome is unknown.
const SETTLE_RETRIES: [Duration; 4] = [
    Duration::from_millis(250),
    Duration::from_millis(500),
    Duration::from_secs(1),
    Duration::from_secs(2),
];
/// How often an unsettled writer retries a catch-up while it has no work.
pub(super) const RETRY: Duration = Duration::from_secs(1);

/// Whether a failed COMMIT may have committed: true unless the server answered it with an
/// error (then it rolled back), except CockroachDB's "result is ambiguous".
pub(super) fn outcome_unknown(e: &PgError) -> bool {
    match e.code() {
        Some(code) => *code == SqlState::T_R_STATEMENT_COMPLETION_UNKNOWN,
        None => e.as_db_error().is_none(),
    }
}

/// The writer's side of the watch feed.
pub(super) struct Feed {
    report: Reporter,
    /// The last revision handed to watchers.
    reported: Revision,
    /// A commit's outcome was lost and no catch-up has succeeded since: the database may hold
    /// revisions after `reported` that watchers have not had.
    pub unsettled: bool,
}

impl Feed {
    pub(super) fn new(report: Reporter, revision: Revision) -> Feed {
        Feed {
            report,
            reported: revision,
            unsettled: false,
        }
    }

    /// Where compactions are reported.
    pub(super) fn reporter(&self) -> &Reporter {
        &self.report
    }

    /// Hand a committed group's events to watchers.
    pub(super) fn committed(&mut self, last: Revision, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        self.reported = self.reported.max(last);
        self.report.committed(last, events);
    }

    /// After a lost commit: catch up, retrying a few times while the database is away.
    /// Returns the events read (the lost group's, if it committed), or the last error.
    pub(super) async fn settle(
        &mut self,
        conn: &mut PgConn,
        target: &Target,
    ) -> Result<Vec<Event>> {
        self.unsettled = true;
        let mut pauses = SETTLE_RETRIES.iter();
        loop {
            match self.catch_up(conn, target).await {
                Ok(events) => return Ok(events),
                Err(e) => match pauses.next() {
                    Some(pause) => tokio::time::sleep(*pause).await,
                    None => return Err(e),
                },
            }
        }
    }

    /// Read every logged event after the last one handed out, under the meta row lock, and
    /// hand them to watchers. Clears `unsettled` on success.
    pub(super) async fn catch_up(
        &mut self,
        conn: &mut PgConn,
        target: &Target,
    ) -> Result<Vec<Event>> {
        match self.read_after(conn, target).await {
            Ok((current, events)) => {
                if current > self.reported {
                    tracing::info!(
                        from = self.reported + 1,
                        to = current,
                        "delivering revisions committed while the connection to PostgreSQL was lost"
                    );
                }
                self.committed(current, events.clone());
                self.unsettled = false;
                Ok(events)
            }
            Err(e) => {
                tracing::warn!(
                    host = %target.host,
                    error = %e,
                    "cannot reach PostgreSQL to learn what committed; retrying"
                );
                Err(e)
            }
        }
    }

    async fn read_after(
        &self,
        conn: &mut PgConn,
        target: &Target,
    ) -> Result<(Revision, Vec<Event>)> {
        let err = |e: PgError| Error::Query {
            source: Error::source_of(e),
        };
        conn.ensure_open(target).await?;
        let tx = conn.client.transaction().await.map_err(err)?;
        tx.batch_execute(&format!("SET LOCAL lock_timeout = '{LOCK_WAIT}'"))
            .await
            .map_err(err)?;
        let current: Revision = tx
            .query_one(&format!("{} FOR UPDATE", sql::revision()), &[])
            .await
            .map_err(err)?
            .get(0);
        let rows = if current > self.reported {
            let sql = format!(
                "SELECT {EVENT_COLUMNS} FROM {EVENTS} WHERE revision > $1 AND revision <= $2 \
                 ORDER BY revision"
            );
            tx.query(&sql, &[&self.reported, &current])
                .await
                .map_err(err)?
        } else {
            Vec::new()
        };
        // Nothing was written; ending the transaction releases the lock.
        tx.rollback().await.map_err(err)?;
        Ok((current, decode_events(rows)?))
    }
}

/// Whether every log entry of `plan` is among `events` as written: then its transaction
/// committed. (Its revisions were allocated under the meta row lock, so if they hold other
/// rows, or none, it rolled back.)
pub(super) fn committed(plan: &Plan, events: &[Event]) -> bool {
    plan.log.iter().all(|entry| {
        let want = &entry.event;
        events.iter().any(|e| {
            e.revision == want.revision
                && e.key == want.key
                && e.kind == want.kind
                && e.value == want.value
        })
    })
}
