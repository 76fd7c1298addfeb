//! Replica apportionment: how many replicas of a `Divided` workload each selected cluster runs.
//!
//! This is the arithmetic of the last step of scheduling (filter → score → select → **assign**).
//! It works over small local types ([`Target`], [`Assignment`]) so it can be checked
//! against reference tables; the policy types are mapped onto it by the caller ([`super`]).
//!
//! # Method
//! Webster / Sainte-Laguë highest averages: seats are handed out one at a time, each to the
//! cluster with the highest `weight / (2s + 1)` where `s` is the seats it holds (divisors
//! 1, 3, 5, …). Webster rather than D'Hondt or largest remainders because it is unbiased between
//! large and small weights and never shows the Alabama paradox (a larger total never takes a
//! replica away from a cluster), which is what makes scale-up stable.
//!
//! # Rules
//! - **Deterministic.** Equal priorities go to the cluster with fewer replicas so far, then to the
//!   cluster whose name sorts first (byte order). So 7 replicas over weights 1:1:1 on `a`, `b`,
//!   `c` give 3/2/2: after 2/2/2 the three tie on replicas and `a` wins by name.
//! - **Bounds.** Every cluster's `min` is seated first, whatever its weight; a cluster at its
//!   `max` takes no more seats; a cluster of weight 0 gets nothing beyond its `min`. Minimums
//!   above the total, or maximums too small to hold it, are errors ([`crate::Error`]).
//! - **Stable under churn** (unless [`Options::rebalance`]). Each cluster keeps its `current`
//!   replicas, clipped into `[min, max]` (a cluster that left is simply not among the targets, so
//!   its replicas are dropped and re-divided). Only the difference is apportioned:
//!   - scale-up adds seats by the same method, starting from the kept counts; a cluster that joins
//!     with `current: 0` only receives replicas that are added, so running workloads are not
//!     reshuffled;
//!   - scale-down removes seats one at a time from the cluster holding the most replicas relative
//!     to its weight (lowest `weight / (2s − 1)`), never below its `min`; ties go to the cluster
//!     with more replicas, then to the name that sorts last (the exact inverse of adding).
//!
//!   The weight of a kept cluster does not drain it: to move replicas away, remove the cluster from
//!   the placement or ask for rebalancing. With rebalancing, `current` is ignored and the result is
//!   the fresh apportionment. With every `current` at 0 both modes agree.
//! - **Dynamic weights** ([`divide_dynamic`], Karmada's `dynamicWeight: AvailableReplicas`): the
//!   weight is the cluster's free capacity in replicas. Because that capacity is already net of
//!   what runs there, the divisor counts only the seats this decision adds, not the kept ones.
//!   Free capacity is a weight, not a cap: use `max` to cap. Clusters with no free capacity get
//!   nothing, unless no cluster with free capacity can take the replicas (all have none, or are
//!   at their `max`): then every cluster weighs 1, so the workload is still placed and the
//!   member's own scheduler reports what does not fit.
//!
//! Cost: O(n log n + seats · log n) for n clusters, with a binary heap (see the `webster` module).

mod kinds;
#[cfg(test)]
mod tests;
pub(crate) mod webster;

use std::collections::HashSet;

use crate::{Error, Result};
pub use kinds::{divide_hpa, divide_job, HpaAssignment, JobAssignment};
use webster::Slot;

/// A selected cluster as apportionment sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Target {
    /// The member cluster's name.
    pub cluster: String,
    /// Static weight (ignored by [`divide_dynamic`], which weighs by free capacity).
    pub weight: u32,
    /// Replicas this cluster gets whatever its weight.
    pub min: Option<u32>,
    /// Replicas this cluster never exceeds.
    pub max: Option<u32>,
    /// Replicas the current decision gives it (0 for a cluster new to the binding).
    pub current: u32,
}

impl Target {
    /// A target with a weight and no bounds, new to the binding.
    pub fn new(cluster: impl Into<String>, weight: u32) -> Self {
        Self {
            cluster: cluster.into(),
            weight,
            ..Self::default()
        }
    }
}

/// The replicas one cluster runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assignment {
    /// The member cluster's name.
    pub cluster: String,
    /// Its share of the replicas (may be 0).
    pub replicas: u32,
}

/// How a division treats the current placement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Ignore `current` and divide afresh (the policy asked for rebalancing). Default: keep.
    pub rebalance: bool,
}

/// Divides `total` replicas by static weights, keeping the current placement (see the module
/// docs). One assignment per target, in the targets' order, zeros included.
pub fn divide_static(total: u32, targets: &[Target]) -> Result<Vec<Assignment>> {
    divide_static_with(total, targets, Options::default())
}

/// [`divide_static`] with explicit [`Options`].
pub fn divide_static_with(
    total: u32,
    targets: &[Target],
    opts: Options,
) -> Result<Vec<Assignment>> {
    let weights: Vec<u64> = targets.iter().map(|t| u64::from(t.weight)).collect();
    divide(total, targets, &weights, false, opts)
}

/// Divides `total` replicas by each cluster's available replicas (free capacity; negative counts
/// as 0), keeping the current placement (see the module docs). One assignment per target, in the
/// targets' order, zeros included.
pub fn divide_dynamic(total: u32, targets: &[(Target, i64)]) -> Result<Vec<Assignment>> {
    divide_dynamic_with(total, targets, Options::default())
}

/// [`divide_dynamic`] with explicit [`Options`].
pub fn divide_dynamic_with(
    total: u32,
    targets: &[(Target, i64)],
    opts: Options,
) -> Result<Vec<Assignment>> {
    let plain: Vec<Target> = targets.iter().map(|(t, _)| t.clone()).collect();
    let free: Vec<u64> = targets
        .iter()
        .map(|&(_, available)| u64::try_from(available).unwrap_or(0))
        .collect();
    let equal = vec![1; plain.len()];
    if free.iter().all(|&w| w == 0) {
        return divide(total, &plain, &equal, true, opts);
    }
    match divide(total, &plain, &free, true, opts) {
        // The clusters with free capacity are all at their max: fall back to equal weights.
        Err(Error::MaxesTooSmall { .. }) => divide(total, &plain, &equal, true, opts),
        other => other,
    }
}

/// The common core: validate, seat the kept replicas, then add or remove the difference.
fn divide(
    total: u32,
    targets: &[Target],
    weights: &[u64],
    dynamic: bool,
    opts: Options,
) -> Result<Vec<Assignment>> {
    let mut seen = HashSet::with_capacity(targets.len());
    let mut mins = 0u64;
    for t in targets {
        if !seen.insert(t.cluster.as_str()) {
            return Err(Error::DuplicateCluster {
                cluster: t.cluster.clone(),
            });
        }
        if let (Some(min), Some(max)) = (t.min, t.max) {
            if min > max {
                return Err(Error::MinAboveMax {
                    cluster: t.cluster.clone(),
                    min,
                    max,
                });
            }
        }
        mins += u64::from(t.min.unwrap_or(0));
    }
    if mins > u64::from(total) {
        return Err(Error::MinsExceedTotal { total, mins });
    }

    let mut slots: Vec<Slot> = targets
        .iter()
        .zip(weights)
        .map(|(t, &weight)| {
            let floor = t.min.unwrap_or(0);
            let cap = t.max.unwrap_or(u32::MAX);
            let current = if opts.rebalance { 0 } else { t.current };
            let kept = current.clamp(floor, cap);
            Slot {
                weight,
                seats: kept,
                // Dynamic: only the min top-up counts, the running replicas are already
                // subtracted from the free capacity that serves as weight.
                counted: if dynamic {
                    kept - current.min(kept)
                } else {
                    kept
                },
                floor,
                cap,
            }
        })
        .collect();

    let ranks = webster::name_ranks(&targets.iter().map(|t| &t.cluster).collect::<Vec<_>>());
    let held: u64 = slots.iter().map(|s| u64::from(s.seats)).sum();
    let want = u64::from(total);
    if held < want {
        let room = webster::room(&slots);
        if want - held > room {
            return Err(Error::MaxesTooSmall {
                total,
                capacity: held + room,
            });
        }
        webster::add(&mut slots, &ranks, want - held);
    } else if held > want {
        // The floors sum to `mins <= total`, so there are enough seats above them.
        webster::remove(&mut slots, &ranks, held - want);
    }

    Ok(targets
        .iter()
        .zip(slots)
        .map(|(t, s)| Assignment {
            cluster: t.cluster.clone(),
            replicas: s.seats,
        })
        .collect())
}
