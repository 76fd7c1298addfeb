//! The name table of a snapshot, split into shards that snapshots share.
//!
//! A name's shard is chosen by its hash; each shard is an ordinary hash map behind an `Arc`. A new
//! snapshot made from an old one by [`super::SnapshotBuilder`] copies only the shards holding the
//! names that changed and shares the rest, so a verdict change costs a few small copies rather than
//! a whole table, and two snapshots alive during a swap take little more memory than one.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::Arc;

use super::Node;
use crate::hash::FastBuild;

/// Number of shards (a power of two): about 280 names each at 10,000 services × 3 endpoints.
const SHARDS: usize = 256;

/// One shard: lowercased wire names to what they hold.
pub(crate) type Shard = HashMap<Box<[u8]>, Node, FastBuild>;

/// Every name of a snapshot; see the module docs.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Names {
    shards: Box<[Arc<Shard>]>,
}

impl Default for Names {
    fn default() -> Self {
        Names {
            shards: (0..SHARDS).map(|_| Arc::new(Shard::default())).collect(),
        }
    }
}

/// The shard of `name`. It takes bits of the hash that the shard's own table does not use for
/// its buckets (the low bits) nor for its control bytes (the top seven), so names stay spread.
#[inline]
fn shard_of(name: &[u8]) -> usize {
    (FastBuild::default().hash_one(name) >> 40) as usize & (SHARDS - 1)
}

impl Names {
    /// What `name` holds, if it exists.
    #[inline]
    pub(crate) fn get(&self, name: &[u8]) -> Option<&Node> {
        self.shards[shard_of(name)].get(name)
    }

    /// Whether `name` exists.
    pub(crate) fn contains_key(&self, name: &[u8]) -> bool {
        self.get(name).is_some()
    }

    /// Number of names.
    pub(crate) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len()).sum()
    }

    /// The shard of `name`, copied first if another snapshot shares it.
    pub(crate) fn shard_mut(&mut self, name: &[u8]) -> &mut Shard {
        Arc::make_mut(&mut self.shards[shard_of(name)])
    }

    /// Makes room for about `names` names in all, so that a full build does not grow (and
    /// leave behind) each shard's table several times over.
    pub(crate) fn reserve(&mut self, names: usize) {
        // a shard's share, plus three standard deviations of how names fall into shards
        let share = names / SHARDS;
        let each = share + 3 * (share as f64).sqrt() as usize;
        for shard in self.shards.iter_mut() {
            Arc::make_mut(shard).reserve(each);
        }
    }

    /// Gives each shard's table the smallest size that holds its names (after a full build).
    pub(crate) fn shrink(&mut self) {
        for shard in self.shards.iter_mut() {
            Arc::make_mut(shard).shrink_to_fit();
        }
    }

    /// How many shards `other` shares with `self` (the same allocation, not merely equal).
    #[cfg(test)]
    pub(crate) fn shared_with(&self, other: &Names) -> usize {
        self.shards
            .iter()
            .zip(other.shards.iter())
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .count()
    }
}
