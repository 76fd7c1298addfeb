//! [`feed_part`]: a feed for a reader that needs only part of what an API serves.

use std::collections::HashMap;
use std::fmt::Debug;
use std::hash::Hash;
use std::sync::Arc;

use futures::StreamExt;
use kube::runtime::reflector::store::Writer;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;

/// What a reader needs of an API's objects.
pub struct Part<K> {
    /// The objects it reads; the others are not stored, and one that stops being kept leaves
    /// the store.
    pub keep: fn(&K) -> bool,
    /// What it reads of them: the rest is cut off before they are stored (they are kept
    /// [`lean`](crate::lean) too).
    pub trim: fn(&mut K),
    /// A digest of what it depends on: an event that leaves it the same (a status write the
    /// reader does not look at) wakes nobody.
    pub digest: fn(&K) -> u64,
}

/// As [`feed`](crate::feed), storing and waking for only the [`Part`] of `api`'s objects the
/// reader needs: a controller that recomputes everything on a wake-up is not woken by every
/// status write of thousands of objects it does not read, nor holds them. Runs until dropped.
pub async fn feed_part<K>(
    api: Api<K>,
    config: watcher::Config,
    mut writer: Writer<K>,
    changed: Arc<Notify>,
    part: Part<K>,
) where
    K: Resource + Clone + DeserializeOwned + Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + Hash + Clone,
{
    let mut sieve = Sieve::new(part);
    watcher(api, config)
        .default_backoff()
        .for_each(|event| {
            if let Some((event, wake)) = event.ok().and_then(|e| sieve.sift(e)) {
                writer.apply_watcher_event(&event);
                if wake {
                    changed.notify_one();
                }
            }
            futures::future::ready(())
        })
        .await;
}

/// Which watch events a [`Part`] lets through, and which of those wake the reader.
pub struct Sieve<K> {
    part: Part<K>,
    /// The digest of every stored object, by namespace and name.
    stored: HashMap<(Option<String>, String), u64>,
    /// The same, for a relist under way.
    listing: HashMap<(Option<String>, String), u64>,
}

impl<K: Resource> Sieve<K> {
    /// A sieve for `part`, nothing stored yet.
    pub fn new(part: Part<K>) -> Self {
        Self {
            part,
            stored: HashMap::new(),
            listing: HashMap::new(),
        }
    }

    /// The event to apply to the store for `event`, if any, and whether it wakes the reader.
    pub fn sift(&mut self, event: watcher::Event<K>) -> Option<(watcher::Event<K>, bool)> {
        use watcher::Event::*;
        let key = |o: &K| {
            (
                o.meta().namespace.clone(),
                o.meta().name.clone().unwrap_or_default(),
            )
        };
        match event {
            Apply(o) if (self.part.keep)(&o) => {
                let o = self.cut(o);
                let d = (self.part.digest)(&o);
                let wake = self.stored.insert(key(&o), d) != Some(d);
                Some((Apply(o), wake))
            }
            Apply(o) | Delete(o) => {
                // Gone, or no longer kept: out of the store, if it was there.
                self.stored.remove(&key(&o))?;
                Some((Delete(self.cut(o)), true))
            }
            Init => {
                self.listing.clear();
                Some((Init, false))
            }
            InitApply(o) if (self.part.keep)(&o) => {
                let o = self.cut(o);
                self.listing.insert(key(&o), (self.part.digest)(&o));
                Some((InitApply(o), false))
            }
            InitApply(_) => None,
            InitDone => {
                self.stored = std::mem::take(&mut self.listing);
                Some((InitDone, true))
            }
        }
    }

    fn cut(&self, mut o: K) -> K {
        crate::lean(&mut o);
        (self.part.trim)(&mut o);
        o
    }
}

#[cfg(test)]
mod tests;
