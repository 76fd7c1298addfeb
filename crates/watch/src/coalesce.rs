//! Wake-ups gathered for a moment and handed on once each.
//!
//! A controller that reconciles a parent whenever one of its children changes (a binding for
//! each of its Works' status reports) would write the parent once per child event; children
//! reporting within a short window are better answered by one reconcile. [`coalesce`] holds
//! what arrives for `window` after the first arrival and then yields every distinct item once,
//! in the order first seen. Only the triggers that can wait should go through it: a parent's
//! own changes keep reaching its controller at once.

use std::collections::HashSet;
use std::hash::Hash;
use std::time::Duration;

use futures::Stream;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

/// The items of `rx`, each distinct item of a burst once: a burst is what arrives within
/// `window` of its first item. Ends when `rx` is closed and drained.
pub fn coalesce<T>(rx: UnboundedReceiver<T>, window: Duration) -> impl Stream<Item = T>
where
    T: Eq + Hash + Clone,
{
    let state = Burst {
        rx,
        ready: Vec::new(),
        closed: false,
    };
    futures::stream::unfold(state, move |mut s| async move {
        if s.ready.is_empty() && !s.closed {
            s.gather(window).await;
        }
        // Yielded from the back: the burst was stored reversed.
        let next = s.ready.pop()?;
        Some((next, s))
    })
}

struct Burst<T> {
    rx: UnboundedReceiver<T>,
    /// The gathered burst, last-seen first.
    ready: Vec<T>,
    closed: bool,
}

impl<T: Eq + Hash + Clone> Burst<T> {
    /// Waits for an item, then gathers until `window` after it.
    async fn gather(&mut self, window: Duration) {
        let Some(first) = self.rx.recv().await else {
            self.closed = true;
            return;
        };
        let deadline = Instant::now() + window;
        let mut seen: HashSet<T> = HashSet::from([first.clone()]);
        let mut order = vec![first];
        loop {
            tokio::select! {
                item = self.rx.recv() => match item {
                    Some(item) => {
                        if seen.insert(item.clone()) {
                            order.push(item);
                        }
                    }
                    None => {
                        self.closed = true;
                        break;
                    }
                },
                _ = tokio::time::sleep_until(deadline) => break,
            }
        }
        order.reverse();
        self.ready = order;
    }
}

#[cfg(test)]
mod tests;
