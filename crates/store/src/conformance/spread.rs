//! Two replicas as one [`Store`], for running the suite with its writes spread over both:
//! every other write goes through the second replica, everything else through the first. A
//! write through the second returns once the first's feed has its revision, as a client that
//! reads from one replica what it wrote through another waits for a consistent read.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;

use crate::backend::{Backend, Shared};
use crate::batch::{self, Op};
use crate::keys::Range;
use crate::{Event, ListResult, Record, Result, Revision, Store};

/// How long a write through the second replica waits for the first's feed.
const FEED_WITHIN: Duration = Duration::from_secs(10);

struct Spread {
    first: Arc<dyn Backend>,
    second: Arc<dyn Backend>,
    writes: AtomicUsize,
}

/// `first` and `second` (replicas of one database) as one store.
pub(super) fn spread(first: Store, second: Store) -> Store {
    Store {
        inner: Arc::new(Spread {
            first: first.inner,
            second: second.inner,
            writes: AtomicUsize::new(0),
        }),
    }
}

#[async_trait]
impl Backend for Spread {
    fn shared(&self) -> &Arc<Shared> {
        self.first.shared()
    }

    async fn get(&self, key: &str) -> Result<Option<Record>> {
        self.first.get(key).await
    }

    async fn list(
        &self,
        range: Range,
        revision: Option<Revision>,
        limit: Option<usize>,
    ) -> Result<ListResult> {
        self.first.list(range, revision, limit).await
    }

    async fn events_after(&self, after: Revision, limit: usize) -> Result<Vec<Event>> {
        self.first.events_after(after, limit).await
    }

    async fn write(&self, op: Op) -> Result<Record> {
        if self
            .writes
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(2)
        {
            return self.first.write(op).await;
        }
        let outcome = self.second.write(op).await;
        let revision = batch::revision_of(&outcome);
        if let Some(r) = revision.filter(|_| !self.first.shared().is_closed()) {
            assert!(
                self.first.shared().reached(r, FEED_WITHIN).await,
                "revision {r}, written through the second replica, did not reach the first's \
                 feed within {FEED_WITHIN:?}"
            );
        }
        outcome
    }

    async fn current_revision(&self) -> Result<Revision> {
        self.first.current_revision().await
    }

    fn close_reads(&self) {
        self.first.close_reads();
    }
}

impl Drop for Spread {
    fn drop(&mut self) {
        // The second replica's writer stops when its last handle goes; its reads now.
        self.second.close_reads();
    }
}
