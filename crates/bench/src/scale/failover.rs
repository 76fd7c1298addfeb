//! The failover phase: one loaded cluster of the fleet stops answering (the simulator stops it:
//! 503 to every request, as an unreachable API server fails), and the phase times how long
//! until every binding that placed replicas there has moved them to its other clusters and is
//! applied there. The hub cannot know sooner than its grace period (the Lease not renewed) plus
//! the failover toleration; the target is that plus 30 s. The cluster is started again
//! afterwards, so cleanup can prune what it still holds.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use flotilla_apis::work::v1alpha1::{ResourceBinding, CONDITION_FULLY_APPLIED};
use kube::{Api, ResourceExt};

use super::divided::Load;
use super::fleet::SimFleet;
use crate::progress::Progress;
use crate::track::{self, Key, Tracker, Verdict};

/// How long the wait goes on without another binding moving, once moves began.
const STALL: Duration = Duration::from_secs(120);

/// What the phase measured.
#[derive(Clone, Debug)]
pub struct Failover {
    /// The cluster stopped.
    pub cluster: String,
    /// Bindings that had it.
    pub bindings: usize,
    /// From the stop to every one of them moved and applied.
    pub took: Option<Duration>,
    /// Bindings not moved when the wait ended, and up to 5 with why.
    pub not_moved: (usize, Vec<String>),
}

/// Stop the cluster holding the most of `load`'s bindings in `ns`, wait for them to move, start
/// it again. `budget` is how long the hub is allowed (grace period + toleration + 30 s); the
/// wait gives up a minute after it.
pub async fn run(
    set: &mut SimFleet,
    ns: &str,
    load: &Load,
    budget: Duration,
    progress: &Progress,
) -> Result<Failover> {
    let mut count = std::collections::BTreeMap::<&String, usize>::new();
    for clusters in load.placed.values() {
        for c in clusters {
            *count.entry(c).or_default() += 1;
        }
    }
    let Some((victim, _)) = count
        .iter()
        .max_by_key(|(c, n)| (**n, std::cmp::Reverse(*c)))
    else {
        bail!("no binding of the load phase is placed anywhere");
    };
    let victim = (*victim).clone();
    let keys: Vec<Key> = load
        .placed
        .iter()
        .filter(|(_, c)| c.contains(&victim))
        .map(|(k, _)| k.clone())
        .collect();
    let gone = victim.clone();
    let moved = Tracker::start_keyed(
        Api::<ResourceBinding>::namespaced(set.client.clone(), ns),
        "",
        move |b: &ResourceBinding| {
            // Keyed like the load's placements: by the template.
            let key = format!(
                "{}/{}",
                b.namespace().unwrap_or_default(),
                b.spec.resource.name
            );
            vec![(key, moved_off(b, &gone))]
        },
    )
    .await?;
    let phase = progress.phase(
        &format!(
            "failover: {victim} (in {} bindings) stops; until they are applied elsewhere \
             (the hub's budget: {} s)",
            keys.len(),
            budget.as_secs()
        ),
        keys.len() as u64,
    );
    set.control("stop", &victim).await?;
    let started = Instant::now();
    let trackers = [&moved];
    let give_up = budget + Duration::from_secs(60);
    let waited = track::wait_met(
        &trackers,
        || keys.clone(),
        phase.bar(),
        STALL,
        || {
            set.check_alive()?;
            // Until the hub's budget (and a minute) is spent, nothing moving is expected.
            Ok(started.elapsed() < give_up && keys.iter().all(|k| moved.met_at(k).is_none()))
        },
    )
    .await;
    let took = started.elapsed();
    set.control("start", &victim).await?;
    let waited = waited?;
    let all = waited.met == keys.len();
    phase.done(&if all {
        format!("all moved {:.1} s after the stop", took.as_secs_f64())
    } else {
        format!("{} of {} moved", waited.met, keys.len())
    });
    Ok(Failover {
        cluster: victim,
        bindings: keys.len(),
        took: all.then(|| {
            keys.iter()
                .filter_map(|k| moved.met_at(k))
                .max()
                .map_or(took, |at| at.saturating_duration_since(started))
        }),
        not_moved: (keys.len() - waited.met, waited.missing),
    })
}

/// Whether binding `b` no longer places anything in `gone`, and is applied in every cluster it
/// does place in.
fn moved_off(b: &ResourceBinding, gone: &str) -> Verdict {
    let placed = &b.spec.clusters;
    if placed.iter().any(|c| c.name == gone) {
        return Verdict::Pending(Some(format!("still placed in {gone}")));
    }
    let Some(status) = &b.status else {
        return Verdict::Pending(Some("no status".into()));
    };
    let fully = status
        .conditions
        .iter()
        .any(|c| c.type_ == CONDITION_FULLY_APPLIED && c.status == "True");
    let applied = placed.iter().all(|c| {
        status
            .aggregated_status
            .iter()
            .any(|s| s.cluster_name == c.name && s.applied)
    });
    if fully && applied {
        Verdict::Met
    } else {
        Verdict::Pending(Some(format!(
            "moved to {}, not applied everywhere yet",
            placed
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )))
    }
}
