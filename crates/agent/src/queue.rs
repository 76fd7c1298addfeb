//! A de-duplicating work queue of Work names, as client-go's workqueue.
//!
//! Many member events for one Work (a Deployment's status moves five times during a rollout)
//! must cost one reconcile, not five, and one Work must never be reconciled by two workers at
//! once (they would race on its status). So a name is queued at most once; a name added while a
//! worker holds it is queued again when the worker is [`done`](Queue::done) with it, and the
//! worker then reconciles once more with the newest state.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::Notify;

#[derive(Default)]
struct State {
    order: VecDeque<String>,
    queued: HashSet<String>,
    active: HashSet<String>,
    /// Added while active: queued again at `done`.
    again: HashSet<String>,
}

/// The queue; cheap to clone (all clones share it).
#[derive(Clone, Default)]
pub struct Queue {
    state: Arc<Mutex<State>>,
    ready: Arc<Notify>,
}

// === impl Queue ===

impl Queue {
    /// Queue `name` (no-op if already queued).
    pub fn add(&self, name: &str) {
        let mut s = self.state.lock();
        if s.active.contains(name) {
            s.again.insert(name.to_owned());
            return;
        }
        if s.queued.insert(name.to_owned()) {
            s.order.push_back(name.to_owned());
            drop(s);
            self.ready.notify_one();
        }
    }

    /// Queue `name` after `delay` (a retry or a periodic re-check).
    pub fn add_after(&self, name: &str, delay: Duration) {
        let queue = self.clone();
        let name = name.to_owned();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            queue.add(&name);
        });
    }

    /// The next name to reconcile; the caller must call [`done`](Queue::done) with it.
    pub async fn next(&self) -> String {
        loop {
            let notified = self.ready.notified();
            {
                let mut s = self.state.lock();
                if let Some(name) = s.order.pop_front() {
                    s.queued.remove(&name);
                    s.active.insert(name.clone());
                    if !s.order.is_empty() {
                        // Wake another worker for the rest.
                        self.ready.notify_one();
                    }
                    return name;
                }
            }
            notified.await;
        }
    }

    /// The worker is finished with `name`; if it was added meanwhile, it is queued again.
    pub fn done(&self, name: &str) {
        let again = {
            let mut s = self.state.lock();
            s.active.remove(name);
            s.again.remove(name)
        };
        if again {
            self.add(name);
        }
    }

    /// Names waiting (not counting those being reconciled).
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.state.lock().order.len()
    }

    /// Is nothing waiting?
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests;
