//! The Webster (Sainte-Laguë) engine: seat-by-seat highest averages over a binary heap.
//!
//! Each step gives the next seat to the slot with the highest priority `weight / (2c + 1)`,
//! where `c` is the number of seats the divisor counts for it (normally all it holds; see
//! [`Slot::counted`]). Removing is the exact inverse: the seat taken away is the one whose
//! priority `weight / (2s − 1)` was lowest, so scaling down and up again lands where it started.
//! Priorities are compared as exact fractions by cross-multiplying in `u128` (weights fit in
//! `u64`, divisors in 33 bits), so no float rounding can make two runs disagree.
//! Cost: O(n log n) to sort the names once, then O(log n) per seat moved.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One cluster as the engine sees it.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    /// The weight; a slot of weight 0 never gains a seat.
    pub weight: u64,
    /// Seats held now.
    pub seats: u32,
    /// Seats the divisor counts when adding. Equal to `seats` for static weights; for dynamic
    /// weights only the seats added by this decision count, because the available capacity that
    /// serves as weight has already been reduced by the replicas running there.
    pub counted: u32,
    /// Never remove below this.
    pub floor: u32,
    /// Never add above this.
    pub cap: u32,
}

/// Ranks of the slots by name: the last tie-breaker, precomputed so the heap compares integers.
pub(crate) fn name_ranks<S: AsRef<str>>(names: &[S]) -> Vec<u32> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by(|&a, &b| names[a].as_ref().cmp(names[b].as_ref()));
    let mut ranks = vec![0; names.len()];
    for (rank, idx) in order.into_iter().enumerate() {
        // Cluster lists are far below u32::MAX entries; saturating keeps this total anyway.
        ranks[idx] = u32::try_from(rank).unwrap_or(u32::MAX);
    }
    ranks
}

/// How many more seats the slots that may grow can take (weight > 0, below their cap).
pub(crate) fn room(slots: &[Slot]) -> u64 {
    slots
        .iter()
        .filter(|s| s.weight > 0)
        .map(|s| u64::from(s.cap.saturating_sub(s.seats)))
        .sum()
}

// === impl Grow ===

/// Heap entry for adding: the greatest entry gets the next seat.
#[derive(PartialEq, Eq)]
struct Grow {
    weight: u64,
    counted: u32,
    seats: u32,
    rank: u32,
    idx: usize,
}

impl Ord for Grow {
    fn cmp(&self, other: &Self) -> Ordering {
        // weight/(2c+1) against other.weight/(2c'+1), cross-multiplied.
        let mine = u128::from(self.weight) * (2 * u128::from(other.counted) + 1);
        let theirs = u128::from(other.weight) * (2 * u128::from(self.counted) + 1);
        mine.cmp(&theirs)
            // Ties: fewer replicas so far first, then the name that sorts first.
            .then_with(|| other.seats.cmp(&self.seats))
            .then_with(|| other.rank.cmp(&self.rank))
    }
}

impl PartialOrd for Grow {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Adds `n` seats. The caller has checked `n <= room(slots)`; if not, the extra seats are lost.
pub(crate) fn add(slots: &mut [Slot], ranks: &[u32], n: u64) {
    let grow = |idx: usize, s: &Slot| Grow {
        weight: s.weight,
        counted: s.counted,
        seats: s.seats,
        rank: ranks[idx],
        idx,
    };
    let mut heap: BinaryHeap<Grow> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.weight > 0 && s.seats < s.cap)
        .map(|(idx, s)| grow(idx, s))
        .collect();
    for _ in 0..n {
        let Some(top) = heap.pop() else { return };
        let slot = &mut slots[top.idx];
        slot.seats += 1;
        slot.counted += 1;
        if slot.seats < slot.cap {
            heap.push(grow(top.idx, slot));
        }
    }
}

// === impl Shrink ===

/// Heap entry for removing: the greatest entry loses the next seat.
#[derive(PartialEq, Eq)]
struct Shrink {
    weight: u64,
    seats: u32,
    rank: u32,
    idx: usize,
}

impl Ord for Shrink {
    fn cmp(&self, other: &Self) -> Ordering {
        // The lowest weight/(2s−1) goes first: the most replicas relative to weight.
        let mine = u128::from(self.weight) * (2 * u128::from(other.seats) - 1);
        let theirs = u128::from(other.weight) * (2 * u128::from(self.seats) - 1);
        theirs
            .cmp(&mine)
            // Ties mirror `Grow`: more replicas first, then the name that sorts last.
            .then_with(|| self.seats.cmp(&other.seats))
            .then_with(|| self.rank.cmp(&other.rank))
    }
}

impl PartialOrd for Shrink {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Removes `n` seats, never below a slot's floor. The caller has checked that the seats above
/// the floors number at least `n`.
pub(crate) fn remove(slots: &mut [Slot], ranks: &[u32], n: u64) {
    // Only slots above their floor enter the heap, so `seats >= 1` and `2s − 1` cannot underflow.
    let shrink = |idx: usize, s: &Slot| Shrink {
        weight: s.weight,
        seats: s.seats,
        rank: ranks[idx],
        idx,
    };
    let mut heap: BinaryHeap<Shrink> = slots
        .iter()
        .enumerate()
        .filter(|(_, s)| s.seats > s.floor)
        .map(|(idx, s)| shrink(idx, s))
        .collect();
    for _ in 0..n {
        let Some(top) = heap.pop() else { return };
        let slot = &mut slots[top.idx];
        slot.seats -= 1;
        slot.counted = slot.counted.saturating_sub(1);
        if slot.seats > slot.floor {
            heap.push(shrink(top.idx, slot));
        }
    }
}
