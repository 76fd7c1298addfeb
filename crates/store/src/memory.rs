//! The in-memory backend (`memory:` and `memory:NAME`), for what must be light and need not
//! survive the process: the simulated member clusters of `flotilla sim` (a thousand of them in
//! one process), and tests.
//!
//! The same contract as the other backends, held to the same conformance suite: one writer task
//! group-commits with [`crate::batch`] under a write lock; reads take a read lock, so every list
//! is one consistent snapshot; the event log keeps each event with its previous value, so lists
//! at older revisions and watch replays work until compaction drops them.
//!
//! `memory:` is a new, empty database that goes when its last handle is dropped. `memory:NAME`
//! is a named database that lives as long as the process: closing its store and opening the
//! same URL again gives back what was written (as reopening a file does); it can be open in
//! one store at a time, since watches are fed by the writer of the store that writes.

mod data;
mod writer;

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use async_trait::async_trait;
use parking_lot::{Mutex, RwLock};

use self::data::Data;
use crate::backend::{Backend, Shared};
use crate::keys::Range;
use crate::{Error, Event, ListResult, Record, Result, Revision};

/// Named databases, kept for the life of the process; `true` while a store has one open.
type Named = HashMap<String, (Arc<RwLock<Data>>, bool)>;

static NAMED: LazyLock<Mutex<Named>> = LazyLock::new(Default::default);

pub(crate) struct Memory {
    shared: Arc<Shared>,
    data: Arc<RwLock<Data>>,
}

impl Memory {
    /// Open `name` (after `memory:`): empty for a new, unnamed database.
    pub(crate) fn open(name: &str) -> Result<Memory> {
        let data = if name.is_empty() {
            Arc::new(RwLock::new(Data::default()))
        } else {
            let mut named = NAMED.lock();
            let (data, open) = named
                .entry(name.to_owned())
                .or_insert_with(|| (Arc::new(RwLock::new(Data::default())), false));
            if *open {
                return Err(Error::MemoryInUse {
                    name: name.to_owned(),
                });
            }
            *open = true;
            data.clone()
        };
        let (revision, compacted) = {
            let d = data.read();
            (d.revision, d.compacted)
        };
        let (shared, end) = Shared::new(revision, compacted, false);
        let released = (!name.is_empty()).then(|| name.to_owned());
        tokio::spawn(writer::run(data.clone(), end, released));
        tracing::debug!(name, revision, "opened in-memory store");
        Ok(Memory { shared, data })
    }
}

/// Mark the named database `name` closed (its writer has stopped), so it can be opened again.
fn release(name: &str) {
    if let Some((_, open)) = NAMED.lock().get_mut(name) {
        *open = false;
    }
}

#[async_trait]
impl Backend for Memory {
    fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    async fn get(&self, key: &str) -> Result<Option<Record>> {
        Ok(self.data.read().objects.get(key).cloned())
    }

    async fn list(
        &self,
        range: Range,
        revision: Option<Revision>,
        limit: Option<usize>,
    ) -> Result<ListResult> {
        self.data.read().list(&range, revision, limit)
    }

    async fn events_after(&self, after: Revision, limit: usize) -> Result<Vec<Event>> {
        self.data.read().events_after(after, limit)
    }

    fn close_reads(&self) {}
}

#[cfg(test)]
mod tests;
