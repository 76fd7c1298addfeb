//! Watches: replay the event log, then follow live commits, never losing or repeating one.
//!
//! The watcher subscribes to the writer's broadcast *before* its first log read. Any commit is
//! then either visible to a later log read (committed before that read) or still to come on
//! the broadcast (published after the subscription), and usually both: the watcher remembers
//! the last revision it delivered and skips anything at or below it. If it falls behind the
//! broadcast (lag), it goes back to reading the log from that revision.
//!
//! The log is the truth, the broadcast only a shortcut: revisions have no gaps, so a batch that
//! does not start right after the last revision delivered means the watcher missed something
//! (a commit whose outcome the writer lost, and learned only later), and it reads the log from
//! there. A failed log read (the database away) is retried with backoff, never ends the watch:
//! only [`Error::Compacted`] and [`Error::Closed`] do.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use tokio::sync::broadcast::{self, error::RecvError};

use crate::{Error, Event, Result, Revision, Store};

/// The stream [`Store::watch`] returns.
pub type WatchStream = Pin<Box<dyn Stream<Item = Result<Event>> + Send>>;

/// Events read from the log per query while replaying.
const REPLAY_PAGE: usize = 256;
/// First and longest pause before retrying a failed log read.
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(5);

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
    /// Pause before the next retry of a failed log read.
    retry: Duration,
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
        retry: RETRY_FIRST,
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
                    Ok(events) => {
                        self.retry = RETRY_FIRST;
                        if events.is_empty() {
                            self.mode = Mode::Live;
                        }
                        self.pending.extend(events);
                    }
                    Err(e @ (Error::Compacted { .. } | Error::Closed)) => return self.end(e),
                    Err(e) => {
                        if self.store.inner.shared().is_closed() {
                            return self.end(Error::Closed);
                        }
                        tracing::warn!(
                            error = %e,
                            from = self.last,
                            retry_in = ?self.retry,
                            "watch cannot read the event log; retrying"
                        );
                        tokio::time::sleep(self.retry).await;
                        self.retry = (self.retry * 2).min(RETRY_MAX);
                    }
                },
                Mode::Live => match rx.recv().await {
                    Ok(batch) => {
                        let last = self.last;
                        let mut fresh = batch.iter().filter(|e| e.revision > last).peekable();
                        match fresh.peek() {
                            Some(first) if first.revision != last + 1 => {
                                tracing::debug!(
                                    from = last,
                                    next = first.revision,
                                    "watcher missed revisions; re-reading the event log"
                                );
                                self.mode = Mode::Replay;
                            }
                            _ => self.pending.extend(fresh.cloned()),
                        }
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
