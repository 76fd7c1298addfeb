//! Watches: replay the event log, then follow live commits, never losing or repeating one.
//!
//! The watcher subscribes to the writer's broadcast *before* its first log read. Any commit is
//! then either visible to a later log read (committed before that read) or still to come on
//! the broadcast (published after the subscription), and usually both: the watcher remembers
//! the last revision it delivered and skips anything at or below it. If it falls behind the
//! broadcast (lag), it goes back to reading the log from that revision.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::{Error, Event, Result, Revision, Store};

/// The stream [`Store::watch`] returns.
pub type WatchStream = Pin<Box<dyn Stream<Item = Result<Event>> + Send>>;

/// Events read from the log per query while replaying.
const REPLAY_PAGE: usize = 256;

enum Mode {
    Replay,
    Live,
}

struct Watcher {
    store: Store,
    /// The revision of the last event delivered (or `from`).
    last: Revision,
    rx: Option<broadcast::Receiver<Arc<[Event]>>>,
    pending: VecDeque<Event>,
    mode: Mode,
    done: bool,
}

pub(crate) fn watch(store: Store, from: Revision) -> WatchStream {
    let rx = store.inner.shared().subscribe();
    let watcher = Watcher {
        store,
        last: from,
        rx,
        pending: VecDeque::new(),
        mode: Mode::Replay,
        done: false,
    };
    Box::pin(futures::stream::unfold(watcher, |mut w| async move {
        let item = w.next().await?;
        Some((item, w))
    }))
}

impl Watcher {
    async fn next(&mut self) -> Option<Result<Event>> {
        loop {
            if self.done {
                return None;
            }
            if let Some(ev) = self.pending.pop_front() {
                self.last = ev.revision;
                return Some(Ok(ev));
            }
            let Some(rx) = self.rx.as_mut() else {
                return self.end(Error::Closed);
            };
            match self.mode {
                Mode::Replay => match self.store.inner.events_after(self.last, REPLAY_PAGE).await {
                    Ok(events) if events.is_empty() => self.mode = Mode::Live,
                    Ok(events) => self.pending.extend(events),
                    Err(e) => return self.end(e),
                },
                Mode::Live => match rx.recv().await {
                    Ok(batch) => {
                        let last = self.last;
                        self.pending
                            .extend(batch.iter().filter(|e| e.revision > last).cloned());
                    }
                    Err(RecvError::Lagged(n)) => {
                        tracing::debug!(
                            skipped_batches = n,
                            from = self.last,
                            "watcher lagged; re-reading the event log"
                        );
                        self.mode = Mode::Replay;
                    }
                    Err(RecvError::Closed) => return self.end(Error::Closed),
                },
            }
        }
    }

    fn end(&mut self, e: Error) -> Option<Result<Event>> {
        self.done = true;
        self.rx = None;
        Some(Err(e))
    }
}
