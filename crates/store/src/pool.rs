//! A tiny pool of read connections, shared by both backends.
//!
//! Reads take a connection, use it (SQLite moves it into `spawn_blocking`), and hand it back on
//! drop. Closing the pool fails every later `take` with [`Error::Closed`] and drops
//! connections as they come back, so a closed store holds no database handles.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::{Error, Result};

pub(crate) struct Pool<C> {
    idle: Mutex<Vec<C>>,
    permits: Arc<Semaphore>,
}

impl<C: Send + 'static> Pool<C> {
    pub(crate) fn new(conns: Vec<C>) -> Arc<Pool<C>> {
        let permits = Arc::new(Semaphore::new(conns.len()));
        Arc::new(Pool {
            idle: Mutex::new(conns),
            permits,
        })
    }

    /// Wait for a free connection.
    pub(crate) async fn take(self: &Arc<Self>) -> Result<Pooled<C>> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::Closed)?;
        // One permit per idle connection: holding a permit guarantees one is there, unless the
        // pool was closed between the two steps.
        let conn = self.idle.lock().pop().ok_or(Error::Closed)?;
        Ok(Pooled {
            conn: Some(conn),
            pool: self.clone(),
            _permit: permit,
        })
    }

    /// Refuse later takes and drop idle connections; busy ones are dropped when returned.
    pub(crate) fn close(&self) {
        // Under the lock, so a connection coming back concurrently sees the pool closed.
        let mut idle = self.idle.lock();
        self.permits.close();
        idle.clear();
    }
}

/// A connection on loan from a [`Pool`].
pub(crate) struct Pooled<C: Send + 'static> {
    conn: Option<C>,
    pool: Arc<Pool<C>>,
    // Released after the connection is back in `idle` (fields drop in declaration order).
    _permit: OwnedSemaphorePermit,
}

impl<C: Send + 'static> Deref for Pooled<C> {
    type Target = C;
    fn deref(&self) -> &C {
        // `conn` is only taken in `drop`.
        self.conn
            .as_ref()
            .unwrap_or_else(|| unreachable!("pooled connection used after drop"))
    }
}

impl<C: Send + 'static> DerefMut for Pooled<C> {
    fn deref_mut(&mut self) -> &mut C {
        self.conn
            .as_mut()
            .unwrap_or_else(|| unreachable!("pooled connection used after drop"))
    }
}

impl<C: Send + 'static> Drop for Pooled<C> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            let mut idle = self.pool.idle.lock();
            if !self.pool.permits.is_closed() {
                idle.push(conn);
            }
        }
    }
}
