//! The PostgreSQL backend (`postgres://user:pw@host:port/db`), for hub replicas sharing one
//! database. Same tables and group commit as SQLite: one writer task ([`writer`]), a few
//! pooled read connections ([`read`]), tables created at open ([`conn`]). No TLS: it is meant
//! for a database on loopback or a private network until TLS is wired in.

mod conn;
mod read;
mod writer;

use std::str::FromStr;
use std::sync::Arc;

use async_trait::async_trait;
use tokio_postgres::Config;

use self::conn::PgConn;
use crate::backend::{Backend, Shared};
use crate::keys::Range;
use crate::pool::Pool;
use crate::{Error, Event, ListResult, Record, Result, Revision};

/// Read connections kept open.
const READERS: usize = 4;

pub(crate) struct Postgres {
    shared: Arc<Shared>,
    config: Config,
    readers: Arc<Pool<PgConn>>,
}

impl Postgres {
    pub(crate) async fn open(url: &str) -> Result<Postgres> {
        let config = Config::from_str(url).map_err(|e| Error::ConnectPostgres {
            source: Error::source_of(e),
        })?;
        let writer = PgConn::connect(&config).await?;
        let (revision, compacted) = conn::migrate(&writer).await?;
        let mut readers = Vec::with_capacity(READERS);
        for _ in 0..READERS {
            readers.push(PgConn::connect(&config).await?);
        }
        let (shared, end) = Shared::new(revision, compacted);
        tokio::spawn(writer::run(writer, config.clone(), end));
        tracing::info!(revision, compacted, "opened PostgreSQL store");
        Ok(Postgres {
            shared,
            config,
            readers: Pool::new(readers),
        })
    }

    async fn reader(&self) -> Result<crate::pool::Pooled<PgConn>> {
        let mut conn = self.readers.take().await?;
        conn.ensure_open(&self.config).await?;
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

    fn close_reads(&self) {
        self.readers.close();
    }
}
