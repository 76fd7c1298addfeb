//! The PostgreSQL backend (`postgres://user:pw@host:port/db`), for hub replicas sharing one
//! database. Same tables and group commit as SQLite: one writer task ([`writer`]), a few
//! pooled read connections ([`read`]), tables created at open ([`conn`]). TLS as libpq's
//! `sslmode` says ([`url`], [`tls`]). A commit whose outcome is lost with the connection is
//! settled by reading the database again ([`settle`]), so callers get the truth when it can be
//! learned and watchers get every committed revision either way.

mod advisory;
mod conn;
mod forward;
mod lead;
mod peers;
mod read;
mod settle;
mod tls;
pub(crate) mod url;
mod wire;
mod writer;

use std::sync::Arc;

use async_trait::async_trait;

use self::conn::{PgConn, Target};
use crate::backend::{Backend, Shared};
use crate::batch::Op;
use crate::keys::Range;
use crate::pool::Pool;
use crate::{Durability, Event, ListResult, Record, Result, Revision};

/// Read connections kept open.
const READERS: usize = 4;

pub(crate) struct Postgres {
    shared: Arc<Shared>,
    target: Target,
    readers: Arc<Pool<PgConn>>,
    /// One replica of several (`nats` given at open).
    replica: bool,
    /// Where writes go, for a replica of several.
    forward: Option<forward::Forwarder>,
    /// Whether this replica of several runs the server's own loops ([`lead`]).
    leads: Option<tokio::sync::watch::Receiver<bool>>,
}

impl Postgres {
    /// Open the store; with `nats`, as one replica of several sharing the database
    /// ([`peers`]).
    pub(crate) async fn open(
        url: &str,
        nats: Option<&str>,
        durability: Durability,
    ) -> Result<Postgres> {
        let target = Target::new(url, durability)?;
        let writer = PgConn::connect(&target).await?;
        let conn::Opened {
            revision,
            compacted,
            uid,
        } = conn::migrate(&writer).await?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            readers.push(PgConn::connect(&target).await?);
        }
        let (shared, end) = Shared::new(revision, compacted, nats.is_some());
        let mut forward = None;
        let mut leads = None;
        let announcer = match nats {
            Some(url) => {
                let client = peers::connect(url).await?;
                let follower = PgConn::connect(&target).await?;
                tokio::spawn(peers::follow(
                    Arc::downgrade(&shared),
                    client.clone(),
                    uid.clone(),
                    follower,
                    target.clone(),
                ));
                forward = Some(forward::Forwarder::start(
                    Arc::downgrade(&shared),
                    client.clone(),
                    &uid,
                    target.clone(),
                ));
                leads = Some(lead::start(Arc::downgrade(&shared), target.clone()));
                Some(peers::Announcer::new(client, &uid))
            }
            None => None,
        };
        let replica = announcer.is_some();
        tokio::spawn(writer::run(
            writer,
            target.clone(),
            end,
            revision,
            announcer,
        ));
        tracing::info!(host = %target.host, revision, compacted, replica, ?durability, "opened PostgreSQL store");
        Ok(Postgres {
            shared,
            target,
            readers: Pool::new(readers),
            replica,
            forward,
            leads,
        })
    }

    async fn reader(&self) -> Result<crate::pool::Pooled<PgConn>> {
        let mut conn = self.readers.take().await?;
        conn.ensure_open(&self.target).await?;
        Ok(conn)
    }
}

#[async_trait]
impl Backend for Postgres {
    fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    async fn get(&self, key: &str) -> Result<Option<Record>> {
        read::get(&mut *self.reader().await?, key).await
    }

    async fn list(
        &self,
        range: Range,
        revision: Option<Revision>,
        limit: Option<usize>,
    ) -> Result<ListResult> {
        read::list(&mut *self.reader().await?, &range, revision, limit).await
    }

    async fn events_after(&self, after: Revision, limit: usize) -> Result<Vec<Event>> {
        read::events_after(&mut *self.reader().await?, after, limit).await
    }

    async fn write(&self, op: Op) -> Result<Record> {
        let op = match &self.forward {
            Some(f) => match f.hand(&self.shared, op).await {
                forward::Handed::Done(outcome) => return outcome,
                forward::Handed::Back(op) => op,
            },
            None => op,
        };
        self.shared.write(op).await
    }

    fn replica_stats(&self) -> Option<crate::ReplicaStats> {
        self.forward.as_ref().map(forward::Forwarder::stats)
    }

    fn runs_loops(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        self.leads.clone()
    }

    async fn current_revision(&self) -> Result<Revision> {
        if !self.replica {
            return Ok(self.shared.revision());
        }
        let current = read::revision(&mut *self.reader().await?).await?;
        Ok(current.max(self.shared.revision()))
    }

    fn close_reads(&self) {
        self.readers.close();
    }
}
