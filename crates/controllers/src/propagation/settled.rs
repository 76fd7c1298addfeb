//! What a controller last settled for each binding, and from what: a binding event whose inputs
//! are those of the last reconcile that left nothing to do (most events are status writes,
//! including the controller's own) is answered without doing the work again — at 1,000
//! clusters, scheduling is a pass over every cluster; rendering reads the template and renders
//! a Work per cluster.
//!
//! Each controller says what its inputs are (`I`); time is an input only through deadlines,
//! kept as the wake time: past it, the work is done again. An entry also ages out after
//! [`MAX_AGE`], so whatever was missed (a status edited by hand) is put right on a later event.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::jiff::Timestamp;

/// How long a settled entry is trusted.
pub const MAX_AGE: Duration = Duration::from_secs(600);

/// An epoch of what many bindings depend on (the clusters, the override policies): bumped on
/// every change that matters, part of each binding's inputs.
#[derive(Default)]
pub struct Epoch(AtomicU64);

impl Epoch {
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// Read it before what it counts, so a change that lands in between makes an entry stale
    /// (the work done once more) rather than wrongly fresh.
    pub fn get(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
}

struct Entry<I> {
    inputs: I,
    wake: Option<Timestamp>,
    at: Instant,
}

/// The last settled inputs of each binding, by binding key.
pub struct Settled<I>(Mutex<HashMap<String, Entry<I>>>);

impl<I> Default for Settled<I> {
    fn default() -> Self {
        Self(Mutex::new(HashMap::new()))
    }
}

impl<I: PartialEq> Settled<I> {
    /// `Some(wake)` when the binding was settled from these inputs, less than [`MAX_AGE`] ago,
    /// and its wake time (if any) is still ahead of `now`: nothing to do until then. Otherwise
    /// the entry is forgotten, so a reconcile that ends in an error or a write leaves none.
    pub fn settled(&self, key: &str, inputs: &I, now: Timestamp) -> Option<Option<Timestamp>> {
        let mut memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let entry = memo.get(key)?;
        let fresh = entry.inputs == *inputs
            && entry.at.elapsed() < MAX_AGE
            && entry.wake.is_none_or(|w| now < w);
        if fresh {
            return Some(entry.wake);
        }
        memo.remove(key);
        None
    }

    /// As [`Settled::settled`], but answers the entry itself: for inputs that carry what was
    /// made from them (compared by their `PartialEq`, which leaves that out).
    pub fn settled_with(&self, key: &str, inputs: &I, now: Timestamp) -> Option<I>
    where
        I: Clone,
    {
        self.settled(key, inputs, now)?;
        let memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        memo.get(key).map(|e| e.inputs.clone())
    }

    /// The binding was reconciled from `inputs` and nothing is left to do before `wake`.
    pub fn settle(&self, key: String, inputs: I, wake: Option<Timestamp>) {
        let mut memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let at = Instant::now();
        memo.insert(key, Entry { inputs, wake, at });
    }

    /// Forget a binding (it is going away).
    pub fn forget(&self, key: &str) {
        let mut memo = self.0.lock().unwrap_or_else(|e| e.into_inner());
        memo.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::jiff::SignedDuration;

    use super::*;

    #[test]
    fn settled_only_from_the_same_inputs_and_before_the_wake_time() {
        let now = Timestamp::from_second(1_772_366_400).expect("a time");
        let memo = Settled::<(i64, u64)>::default();
        assert_eq!(memo.settled("shop/web", &(3, 7), now), None);
        memo.settle("shop/web".into(), (3, 7), None);
        assert_eq!(memo.settled("shop/web", &(3, 7), now), Some(None));
        assert_eq!(memo.settled("shop/web", &(3, 8), now), None);
        // A miss forgets the entry.
        assert_eq!(memo.settled("shop/web", &(3, 7), now), None);
        assert_eq!(memo.settled("shop/other", &(3, 7), now), None);
        let wake = now + SignedDuration::from_secs(30);
        memo.settle("shop/web".into(), (3, 7), Some(wake));
        assert_eq!(memo.settled("shop/web", &(3, 7), now), Some(Some(wake)));
        assert_eq!(memo.settled("shop/web", &(3, 7), wake), None);
        memo.forget("shop/web");
        assert_eq!(memo.settled("shop/web", &(3, 7), now), None);
    }

    #[test]
    fn the_epoch_counts_changes() {
        let e = Epoch::default();
        let before = e.get();
        e.bump();
        assert_eq!(e.get(), before + 1);
    }
}
