//! Division for the kinds whose replica count is not one `spec.replicas`: Jobs and
//! HorizontalPodAutoscalers.
//!
//! **Job**: `parallelism` is what a Deployment's `replicas` is, so it is divided like one (by
//! [`super::divide_static`] or [`super::divide_dynamic`], with the same bounds and stability);
//! [`divide_job`] then splits `completions` over the clusters that got parallelism, weighted by
//! that parallelism, with the same tie order (fewer so far, then name). So the two shares line
//! up: a cluster that runs more pods at once also has more to complete. Each running slice gets
//! at least one completion when there are enough; when completions are fewer than the running
//! slices, the slices that lose (lowest parallelism, then the name that sorts last) get no
//! completions and their parallelism becomes 0, because a slice with nothing to complete would
//! finish at once without running anything. Unset completions (a work-queue Job) stay unset.
//!
//! **HPA**: every selected cluster runs its own autoscaler, and `minReplicas` cannot be 0, so
//! every cluster gets at least 1 of each. `minReplicas` is divided by weight with a floor of 1 per
//! cluster (so the sum is the larger of the policy's value and the number of clusters); then
//! `maxReplicas` is divided by weight with each cluster's own minimum as its floor, so every
//! cluster's max is at least its min (and the sum is the larger of the policy's max and the sum of
//! the mins). Both are fresh divisions: the autoscalers own the replica counts in between.

use super::webster::{self, Slot};
use super::{divide_static_with, Assignment, Options, Target};
use crate::Result;

/// One cluster's slice of a Job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobAssignment {
    /// The member cluster's name.
    pub cluster: String,
    /// `spec.parallelism` there (0: do not create the Job there).
    pub parallelism: u32,
    /// `spec.completions` there (`None` when the Job leaves it unset).
    pub completions: Option<u32>,
}

/// Splits a Job's `completions` to match a parallelism division already made (see the module
/// docs). One entry per assignment, in the same order.
pub fn divide_job(parallelism: &[Assignment], completions: Option<u32>) -> Vec<JobAssignment> {
    let Some(completions) = completions else {
        return parallelism
            .iter()
            .map(|a| JobAssignment {
                cluster: a.cluster.clone(),
                parallelism: a.replicas,
                completions: None,
            })
            .collect();
    };
    let running = parallelism.iter().filter(|a| a.replicas > 0).count() as u64;
    let enough = u64::from(completions) >= running;
    // A paused Job (parallelism 0 everywhere) still needs its completions placed: equal weights.
    let paused = running == 0;
    let mut slots: Vec<Slot> = parallelism
        .iter()
        .map(|a| {
            let weight = if paused { 1 } else { u64::from(a.replicas) };
            let first = u32::from(enough && weight > 0 && !paused);
            Slot {
                weight,
                seats: first,
                counted: first,
                floor: 0,
                // Too few completions: at most one per running slice, to as many slices as possible.
                cap: if enough { u32::MAX } else { 1 },
            }
        })
        .collect();
    let held: u64 = slots.iter().map(|s| u64::from(s.seats)).sum();
    let ranks = webster::name_ranks(&parallelism.iter().map(|a| &a.cluster).collect::<Vec<_>>());
    webster::add(&mut slots, &ranks, u64::from(completions) - held);
    parallelism
        .iter()
        .zip(slots)
        .map(|(a, s)| JobAssignment {
            cluster: a.cluster.clone(),
            parallelism: if s.seats == 0 && !paused {
                0
            } else {
                a.replicas
            },
            completions: Some(s.seats),
        })
        .collect()
}

/// One cluster's HorizontalPodAutoscaler bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HpaAssignment {
    /// The member cluster's name.
    pub cluster: String,
    /// `spec.minReplicas` there (at least 1).
    pub min_replicas: u32,
    /// `spec.maxReplicas` there (at least `min_replicas`).
    pub max_replicas: u32,
}

/// Splits an HPA's `minReplicas`/`maxReplicas` over the selected clusters by their weights (see
/// the module docs). Only each target's `cluster` and `weight` are used; when every weight is 0
/// the clusters weigh the same. One entry per target, in the targets' order.
pub fn divide_hpa(
    min_replicas: u32,
    max_replicas: u32,
    targets: &[Target],
) -> Result<Vec<HpaAssignment>> {
    let flat = targets.iter().all(|t| t.weight == 0);
    let count = u32::try_from(targets.len()).unwrap_or(u32::MAX);
    let with_floor = |floor: &dyn Fn(usize) -> u32| -> Vec<Target> {
        targets
            .iter()
            .enumerate()
            .map(|(i, t)| Target {
                cluster: t.cluster.clone(),
                weight: if flat { 1 } else { t.weight },
                min: Some(floor(i)),
                max: None,
                current: 0,
            })
            .collect()
    };
    let fresh = Options { rebalance: true };
    let mins = divide_static_with(min_replicas.max(count), &with_floor(&|_| 1), fresh)?;
    let floors: Vec<u32> = mins.iter().map(|a| a.replicas).collect();
    let sum: u32 = floors.iter().fold(0u32, |acc, &m| acc.saturating_add(m));
    let maxes = divide_static_with(max_replicas.max(sum), &with_floor(&|i| floors[i]), fresh)?;
    Ok(mins
        .into_iter()
        .zip(maxes)
        .map(|(min, max)| HpaAssignment {
            cluster: min.cluster,
            min_replicas: min.replicas,
            max_replicas: max.replicas,
        })
        .collect())
}
