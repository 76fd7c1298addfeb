//! The embedded SQLite backend (`sqlite:PATH`).
//!
//! One writer thread owns the only read-write connection and group-commits every write
//! ([`writer`]); a few read-only connections serve gets, lists and watch replays beside it,
//! which WAL mode allows ([`read`]). Tables and durability settings are in [`schema`]; the
//! files are kept private to the hub's user ([`files`]).

mod checkpoint;
mod files;
mod read;
mod schema;
mod writer;

use std::sync::Arc;

use async_trait::async_trait;
use rusqlite::Connection;

use crate::backend::{Backend, Shared};
use crate::keys::Range;
use crate::pool::Pool;
use crate::{Durability, Error, Event, ListResult, Record, Result, Revision};

/// Read connections: enough for reads to overlap on two cores without starving the writer.
const READERS: usize = 4;

pub(crate) struct Sqlite {
    shared: Arc<Shared>,
    readers: Arc<Pool<Connection>>,
}

impl Sqlite {
    pub(crate) async fn open(path: &str, durability: Durability) -> Result<Sqlite> {
        let owned = path.to_owned();
        tokio::task::spawn_blocking(move || Sqlite::open_blocking(&owned, durability))
            .await
            .map_err(|e| Error::OpenSqlite {
                path: path.to_owned(),
                source: Error::source_of(e),
            })?
    }

    fn open_blocking(path: &str, durability: Durability) -> Result<Sqlite> {
        files::make_private(path)?;
        let (conn, revision, compacted) = schema::open_writer(path, durability)?;
        let readers = (0..READERS)
            .map(|_| schema::open_reader(path))
            .collect::<Result<_>>()?;
        let (stop_checkpoints, checkpoints_stopped) = std::sync::mpsc::channel::<()>();
        checkpoint::spawn(schema::open_checkpointer(path)?, checkpoints_stopped)?;
        let (shared, end) = Shared::new(revision, compacted, false);
        std::thread::Builder::new()
            .name("flotilla-store-sqlite-writer".into())
            .spawn(move || {
                writer::run(conn, end);
                drop(stop_checkpoints);
            })
            .map_err(|e| Error::SpawnWriter {
                source: Error::source_of(e),
            })?;
        tracing::info!(
            path,
            revision,
            compacted,
            ?durability,
            "opened SQLite store"
        );
        Ok(Sqlite {
            shared,
            readers: Pool::new(readers),
        })
    }

    /// Run `f` on a pooled read connection on the blocking pool.
    async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    {
        let mut conn = self.readers.take().await?;
        tokio::task::spawn_blocking(move || f(&mut conn))
            .await
            .map_err(|e| Error::Query {
                source: Error::source_of(e),
            })?
    }
}

#[async_trait]
impl Backend for Sqlite {
    fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    async fn get(&self, key: &str) -> Result<Option<Record>> {
        let key = key.to_owned();
        self.read(move |c| read::get(c, &key)).await
    }

    async fn list(
        &self,
        range: Range,
        revision: Option<Revision>,
        limit: Option<usize>,
    ) -> Result<ListResult> {
        self.read(move |c| read::list(c, &range, revision, limit))
            .await
    }

    async fn events_after(&self, after: Revision, limit: usize) -> Result<Vec<Event>> {
        self.read(move |c| read::events_after(c, after, limit))
            .await
    }

    fn close_reads(&self) {
        self.readers.close();
    }
}
