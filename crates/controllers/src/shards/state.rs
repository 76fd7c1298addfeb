//! What one process holds: per shard, until when it may work it, the Lease as it last wrote
//! it, and which keeper renews it; published to the controllers as [`Owned`].

use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::coordination::v1::Lease;
use parking_lot::Mutex;
use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use super::{Owned, SHARDS};
use crate::metrics::metrics;

/// One held shard.
struct Slot {
    /// Until when this process may work the shard.
    until: Instant,
    /// The Lease as this process last wrote it (the resourceVersion of the next renewal).
    lease: Lease,
    /// Which holding this is: a keeper renews only the holding it was started for, so a shard
    /// given back and taken again is not renewed twice.
    epoch: u64,
}

pub(super) struct State {
    pub(super) identity: String,
    pub(super) member_lease: String,
    slots: Mutex<[Option<Slot>; SHARDS as usize]>,
    epochs: AtomicU64,
    deadlines_moved: Notify,
    owned: watch::Sender<Owned>,
}

impl State {
    pub(super) fn new(identity: &str, member_lease: String) -> (State, watch::Receiver<Owned>) {
        let (owned, rx) = watch::channel(Owned::NONE);
        let state = State {
            identity: identity.to_owned(),
            member_lease,
            slots: Mutex::new(std::array::from_fn(|_| None)),
            epochs: AtomicU64::new(0),
            deadlines_moved: Notify::new(),
            owned,
        };
        (state, rx)
    }

    /// Publishes the shards whose deadline has not passed (and forgets the others: lost).
    pub(super) fn publish(&self) {
        let now = Instant::now();
        let mut lost = Vec::new();
        let owned: Owned = {
            let mut slots = self.slots.lock();
            for (s, slot) in slots.iter_mut().enumerate() {
                if slot.as_ref().is_some_and(|h| h.until <= now) {
                    *slot = None;
                    lost.push(s);
                }
            }
            (0..SHARDS)
                .filter(|s| slots[*s as usize].is_some())
                .collect()
        };
        for s in lost {
            metrics().shard_transition(&self.identity, "lost");
            tracing::warn!(
                shard = s,
                "shard Lease not renewed in time: stopped working it"
            );
        }
        let changed = self.owned.send_if_modified(|o| {
            let changed = *o != owned;
            *o = owned;
            changed
        });
        if changed {
            metrics().shards_owned(&self.identity, owned.len());
            tracing::info!(shards = ?owned.iter().collect::<Vec<_>>(), "owned shards changed");
        }
    }

    /// Stops working everything at once (without writing anything).
    pub(super) fn forget_all(&self) {
        *self.slots.lock() = std::array::from_fn(|_| None);
        self.owned.send_replace(Owned::NONE);
        metrics().shards_owned(&self.identity, 0);
    }

    /// Holds `shard` (taken now) until `until`, as `lease` says: a new holding, whose epoch is
    /// returned for its keeper.
    pub(super) fn take(&self, shard: u32, lease: Lease, until: Instant) -> u64 {
        let epoch = self.epochs.fetch_add(1, Ordering::Relaxed);
        let before = self.slots.lock()[shard as usize].replace(Slot {
            until,
            lease,
            epoch,
        });
        if before.is_none() {
            metrics().shard_transition(&self.identity, "acquired");
        }
        self.deadlines_moved.notify_one();
        epoch
    }

    /// Holds `shard` longer, if it is still the holding `epoch`; whether it was.
    pub(super) fn extend(&self, shard: u32, epoch: u64, lease: Lease, until: Instant) -> bool {
        let mut slots = self.slots.lock();
        match slots[shard as usize].as_mut() {
            Some(slot) if slot.epoch == epoch => {
                slot.until = until;
                slot.lease = lease;
                self.deadlines_moved.notify_one();
                true
            }
            _ => false,
        }
    }

    /// The holding `epoch` of `shard`, if it lasts: until when, and the Lease last written.
    pub(super) fn holding(&self, shard: u32, epoch: u64) -> Option<(Instant, Lease)> {
        let slots = self.slots.lock();
        let slot = slots[shard as usize].as_ref()?;
        (slot.epoch == epoch).then(|| (slot.until, slot.lease.clone()))
    }

    /// Stops holding `shard` (any holding, or only `epoch`'s); the Lease last written, if it
    /// was held.
    pub(super) fn drop_shard(&self, shard: u32, epoch: Option<u64>) -> Option<Lease> {
        let mut slots = self.slots.lock();
        let slot = &mut slots[shard as usize];
        if epoch.is_some_and(|e| slot.as_ref().is_some_and(|h| h.epoch != e)) {
            return None;
        }
        slot.take().map(|h| h.lease)
    }

    /// Whether `shard` is held.
    pub(super) fn holds(&self, shard: u32) -> bool {
        self.slots.lock()[shard as usize].is_some()
    }

    pub(super) fn held(&self) -> Vec<u32> {
        let slots = self.slots.lock();
        (0..SHARDS)
            .filter(|s| slots[*s as usize].is_some())
            .collect()
    }

    fn earliest(&self) -> Option<Instant> {
        self.slots.lock().iter().flatten().map(|h| h.until).min()
    }

    /// Drops shards at their deadlines, whatever the rounds and keepers are doing.
    pub(super) async fn expire(&self) {
        loop {
            let wake = self
                .earliest()
                .unwrap_or_else(|| Instant::now() + std::time::Duration::from_secs(3600));
            tokio::select! {
                _ = tokio::time::sleep_until(wake) => {}
                _ = self.deadlines_moved.notified() => {}
            }
            self.publish();
        }
    }
}
