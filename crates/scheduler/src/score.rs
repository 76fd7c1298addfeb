//! The score step: how much a feasible cluster is preferred where a choice must be made.
//!
//! 100 for a cluster the binding already uses (stability, so a cluster joining does not attract
//! running workloads), minus 10 for each `PreferNoSchedule` taint no toleration covers. Scores
//! only order clusters for the select step's spread constraints; without spread constraints
//! every feasible cluster is selected and the score is only shown by `flotilla explain`.

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::policy::v1alpha1::Placement;

use crate::filter;

/// Score for a cluster the binding already runs in.
pub const SCORE_KEEP: i64 = 100;
/// Score taken off for each `PreferNoSchedule` taint no toleration covers.
pub const SCORE_PREFER_NO_SCHEDULE: i64 = 10;

/// Score of a feasible cluster: [`SCORE_KEEP`] if `kept` (the binding runs there), less
/// [`SCORE_PREFER_NO_SCHEDULE`] for each `PreferNoSchedule` taint no toleration covers.
pub fn score(placement: &Placement, cluster: &Cluster, kept: bool) -> i64 {
    let keep = if kept { SCORE_KEEP } else { 0 };
    let penalties = filter::untolerated_preferences(&placement.cluster_tolerations, cluster);
    keep - SCORE_PREFER_NO_SCHEDULE * i64::try_from(penalties).unwrap_or(i64::MAX / 100)
}
