//! The select step: `placement.spreadConstraints` choose among the feasible clusters.
//!
//! Without spread constraints every feasible cluster is selected (as Karmada does). Each
//! constraint groups clusters by `spreadByField` (`cluster`, `region`, `zone`, `provider`) or by
//! `spreadByLabel`, and bounds how many groups are used:
//! - A group constraint (anything but `cluster`) ranks the groups by their best score, then
//!   their size, then their name, keeps the first `maxGroups` (0 = no bound) and fails when there
//!   are fewer than `minGroups`. A cluster that lacks the field is not selected: it belongs to no
//!   group. Group constraints apply in the order written.
//! - The `cluster` constraint then bounds the number of clusters. When it must drop clusters it
//!   first keeps the best cluster of each group of the first group constraint (so `maxGroups`
//!   clusters still cover `minGroups` regions), then fills up by score, then name.
//!
//! Every cluster that is dropped gets a reason naming the constraint. Cost O(n log n).

use std::collections::BTreeMap;

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::policy::v1alpha1::{SpreadConstraint, SpreadField};

use crate::framework::{name, ClusterVerdict};

/// Selects among `feasible` (indices into `clusters`, in name order); returns the selected
/// indices in name order, or why the constraints cannot be met.
pub(crate) fn select(
    constraints: &[SpreadConstraint],
    clusters: &[&Cluster],
    verdicts: &mut [ClusterVerdict],
    feasible: Vec<usize>,
) -> Result<Vec<usize>, String> {
    if constraints.is_empty() {
        return Ok(feasible);
    }
    let score = |verdicts: &[ClusterVerdict], i: usize| verdicts[i].score.unwrap_or(i64::MIN);
    // Best first; ties keep name order (the sort is stable).
    let mut candidates = feasible;
    candidates.sort_by_key(|&i| std::cmp::Reverse(score(verdicts, i)));

    // For the cluster constraint: the first group constraint's groups, best group first.
    let mut diversity: Option<(Vec<Vec<usize>>, usize)> = None;
    for c in constraints {
        let (label, what) = match (c.spread_by_field, &c.spread_by_label) {
            (Some(SpreadField::Cluster), _) => continue,
            (Some(f), _) => (None, field_name(f)),
            (None, Some(l)) => (Some(l.as_str()), l.as_str()),
            (None, None) => continue,
        };
        let mut groups: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for &i in &candidates {
            match group_of(clusters[i], c.spread_by_field, label) {
                Some(g) => groups.entry(g).or_default().push(i),
                None => not_selected(
                    verdicts,
                    i,
                    format!("has no {what}, which spreadConstraints group by"),
                ),
            }
        }
        let mut ranked: Vec<(&str, Vec<usize>)> = groups.into_iter().collect();
        ranked.sort_by(|(an, a), (bn, b)| {
            // Members are best first, so a[0] is the group's best score.
            score(verdicts, b[0])
                .cmp(&score(verdicts, a[0]))
                .then(b.len().cmp(&a.len()))
                .then(an.cmp(bn))
        });
        let min = usize::try_from(c.min_groups).unwrap_or(0);
        if ranked.len() < min {
            let names: Vec<&str> = ranked.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "spreadConstraints ask for at least {min} {what} groups, but the feasible \
                 clusters span only {} ({}); relax minGroups or make more clusters feasible",
                ranked.len(),
                names.join(", ")
            ));
        }
        let max = usize::try_from(c.max_groups).unwrap_or(0);
        if max > 0 && ranked.len() > max {
            for (g, members) in ranked.drain(max..) {
                for i in members {
                    not_selected(
                        verdicts,
                        i,
                        format!("{what} {g} is not among the {max} chosen (spreadConstraints maxGroups)"),
                    );
                }
            }
        }
        let mut kept = vec![false; verdicts.len()];
        for &i in ranked.iter().flat_map(|(_, m)| m.iter()) {
            kept[i] = true;
        }
        candidates.retain(|&i| kept[i]);
        if diversity.is_none() {
            diversity = Some((ranked.into_iter().map(|(_, m)| m).collect(), min));
        }
    }

    if let Some(c) = constraints
        .iter()
        .find(|c| c.spread_by_field == Some(SpreadField::Cluster))
    {
        let min = usize::try_from(c.min_groups).unwrap_or(0);
        if candidates.len() < min {
            return Err(format!(
                "spreadConstraints ask for at least {min} clusters, but only {} are feasible; \
                 relax minGroups or make more clusters feasible",
                candidates.len()
            ));
        }
        let max = usize::try_from(c.max_groups).unwrap_or(0);
        if max > 0 && candidates.len() > max {
            let mut picked = vec![false; verdicts.len()];
            let mut count = 0;
            if let Some((groups, min_groups)) = &diversity {
                if max < *min_groups {
                    return Err(format!(
                        "spreadConstraints allow at most {max} clusters, too few to cover the \
                         {min_groups} groups asked for; raise the cluster maxGroups"
                    ));
                }
                for m in groups.iter().take(max) {
                    picked[m[0]] = true;
                    count += 1;
                }
            }
            for &i in &candidates {
                if count == max {
                    break;
                }
                if !picked[i] {
                    picked[i] = true;
                    count += 1;
                }
            }
            for &i in &candidates {
                if !picked[i] {
                    not_selected(
                        verdicts,
                        i,
                        format!("not among the {max} best-scoring clusters (spreadConstraints maxGroups)"),
                    );
                }
            }
            candidates.retain(|&i| picked[i]);
        }
    }
    candidates.sort_unstable();
    Ok(candidates)
}

fn not_selected(verdicts: &mut [ClusterVerdict], i: usize, reason: String) {
    verdicts[i].filtered = Some(reason);
}

fn field_name(f: SpreadField) -> &'static str {
    match f {
        SpreadField::Cluster => "cluster",
        SpreadField::Region => "region",
        SpreadField::Zone => "zone",
        SpreadField::Provider => "provider",
    }
}

fn group_of<'c>(
    c: &'c Cluster,
    field: Option<SpreadField>,
    label: Option<&str>,
) -> Option<&'c str> {
    match (field, label) {
        (Some(SpreadField::Cluster), _) => Some(name(c)),
        (Some(SpreadField::Region), _) => c.spec.region.as_deref(),
        (Some(SpreadField::Zone), _) => c.spec.zone.as_deref(),
        (Some(SpreadField::Provider), _) => c.spec.provider.as_deref(),
        (None, Some(l)) => c.metadata.labels.as_ref()?.get(l).map(String::as_str),
        (None, None) => None,
    }
}
