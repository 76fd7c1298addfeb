//! A progressive rollout's next step, decided from the strategy, the revision going out, where
//! each cluster stands (the revision its Work carries and what its member reports), the
//! rollout's last status and the time. Pure: the caller reads the hub and writes the result.
//!
//! A cluster on the revision is `Progressing` until its member reports the object healthy
//! (`Succeeded`, from then on `since`), `Failed` when the member reports it degraded, and
//! `TimeOut` when it is not healthy within `progressDeadline` of being sent the revision. A
//! cluster is done when it has been `Succeeded` for `minSuccessTime`, or has failed. Clusters
//! are taken group by group (the clusters in no group last): a group starts when every cluster
//! of the groups before it is done; `Progressive` takes a named group whole and then the rest
//! `maxConcurrency` at a time, `ProgressivePerGroup` takes each group `maxConcurrency` at a
//! time (default: whole). A cluster that is `Progressing`, or `Succeeded` and not yet done,
//! holds one of the `maxConcurrency` slots. More failures than `maxFailures` stop the rollout:
//! it takes no new cluster, and what is done stays. Paused, it takes none either.
//!
//! A cluster not reached keeps the revision its Work carries; one without a Work gets the last
//! revision that completed everywhere (`stableRevision`), or nothing before the first completes.

use std::collections::BTreeMap;
use std::time::Duration;

use flotilla_apis::conditions::{self, Set};
use flotilla_apis::policy::v1alpha1::{RolloutStrategy, RolloutType};
use flotilla_apis::work::v1alpha1::{
    ClusterRollout, RolloutPhase, RolloutStatus, CONDITION_COMPLETE, CONDITION_FAILED,
    CONDITION_PROGRESSING,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

/// The name of the clusters in no group, in the status.
pub const REST_GROUP: &str = "*";

/// Default `maxConcurrency` of the clusters in no group under `Progressive`: a quarter of the
/// clusters (at least one).
const DEFAULT_CONCURRENCY: &str = "25%";

/// What a member reports about the revision its Work carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum State {
    /// Not applied, or not healthy yet (what it says).
    Pending(String),
    /// Applied for the Work's current generation and available.
    Healthy,
    /// Reported degraded: waiting will not help (what it says).
    Failed(String),
}

/// One target cluster.
#[derive(Clone, Debug)]
pub struct Member {
    /// The Cluster's name.
    pub name: String,
    /// Its group: an index into the strategy's `groups`, `None` for the rest.
    pub group: Option<usize>,
    /// The revision its Work carries.
    pub revision: Option<String>,
    /// It has a Work marked with no revision (written before the rollout strategy was set).
    pub unmarked: bool,
    /// What its member reports about that Work.
    pub state: State,
}

/// What a cluster's Work is rendered from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Render {
    /// The template as this revision holds it.
    Revision(String),
    /// Leave its Work as it is (it carries no revision).
    Keep,
    /// No Work yet.
    Nothing,
}

/// Something that happened, for an Event on the template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// CamelCase reason.
    pub reason: &'static str,
    /// For humans.
    pub message: String,
    /// A Warning (else Normal).
    pub warning: bool,
}

/// Everything the step decides.
#[derive(Clone, Debug)]
pub struct Plan {
    /// The binding's `status.rollout`.
    pub status: RolloutStatus,
    /// What each cluster's Work is rendered from.
    pub render: BTreeMap<String, Render>,
    /// When to look again (a success time or a deadline ends), if nothing else happens.
    pub wake: Option<Timestamp>,
    /// What changed since the last status.
    pub notes: Vec<Note>,
}

/// The rollout of `revision` (numbered `number`) as it stands at `now`.
pub struct Input<'a> {
    /// The policy's strategy.
    pub strategy: &'a RolloutStrategy,
    /// Held (the strategy's `paused`, or the binding's annotation).
    pub paused: bool,
    /// The revision going out.
    pub revision: &'a str,
    /// Its number.
    pub number: i64,
    /// The target clusters.
    pub members: &'a [Member],
    /// The last `status.rollout`.
    pub previous: Option<&'a RolloutStatus>,
    /// Now.
    pub now: Timestamp,
}

/// `value` of `total` clusters: a number, or a percentage rounded up or down.
pub fn scaled(value: &IntOrString, total: usize, round_up: bool) -> Option<usize> {
    match value {
        IntOrString::Int(n) => usize::try_from(*n).ok(),
        IntOrString::String(s) => match s.strip_suffix('%') {
            Some(p) => {
                let p: usize = p.trim().parse().ok()?;
                let scaled = total * p;
                Some(if round_up {
                    scaled.div_ceil(100)
                } else {
                    scaled / 100
                })
            }
            None => s.trim().parse().ok(),
        },
    }
}

/// A duration of the strategy (checked at admission; an unreadable one counts as zero).
fn duration(text: Option<&str>) -> Option<Duration> {
    text.map(|t| flotilla_apis::duration::parse(t).unwrap_or_default())
}

fn plus(t: Timestamp, d: Duration) -> Timestamp {
    t.checked_add(SignedDuration::try_from(d).unwrap_or(SignedDuration::MAX))
        .unwrap_or(Timestamp::MAX)
}

/// Decides the step.
pub fn plan(input: &Input<'_>) -> Plan {
    let strategy = input.strategy;
    let now = input.now;
    let min_success = duration(strategy.min_success_time.as_deref()).unwrap_or_default();
    let deadline = duration(strategy.progress_deadline.as_deref());
    let previous = input.previous.filter(|p| p.revision == input.revision);
    let was = |name: &str| previous.and_then(|p| p.clusters.iter().find(|c| c.name == name));
    let group_name = |g: Option<usize>| {
        g.and_then(|i| strategy.groups.get(i))
            .map_or(REST_GROUP.to_owned(), |g| g.name.clone())
    };
    let mut wake: Option<Timestamp> = None;
    let mut soon = |t: Timestamp| wake = Some(wake.map_or(t, |w| w.min(t)));
    let mut notes = Vec::new();

    // Where each cluster stands on the revision.
    let mut clusters: Vec<ClusterRollout> = Vec::with_capacity(input.members.len());
    for m in input.members {
        let before = was(&m.name);
        let since_before = |phases: &[RolloutPhase]| {
            before
                .filter(|b| phases.contains(&b.phase))
                .and_then(|b| b.since.as_ref())
                .map(|t| t.0)
        };
        let on = m.revision.as_deref() == Some(input.revision);
        let (phase, since, message) = if !on {
            (RolloutPhase::ToApply, None, None)
        } else {
            match &m.state {
                State::Healthy => (
                    RolloutPhase::Succeeded,
                    Some(since_before(&[RolloutPhase::Succeeded]).unwrap_or(now)),
                    None,
                ),
                State::Failed(why) => (
                    RolloutPhase::Failed,
                    Some(since_before(&[RolloutPhase::Failed]).unwrap_or(now)),
                    Some(why.clone()),
                ),
                State::Pending(why) => {
                    let sent = since_before(&[RolloutPhase::Progressing, RolloutPhase::TimeOut])
                        .unwrap_or(now);
                    let phase = match deadline {
                        Some(d) if plus(sent, d) <= now => RolloutPhase::TimeOut,
                        Some(d) => {
                            soon(plus(sent, d));
                            RolloutPhase::Progressing
                        }
                        None => RolloutPhase::Progressing,
                    };
                    (phase, Some(sent), Some(why.clone()))
                }
            }
        };
        if phase.failed() && before.is_none_or(|b| !b.phase.failed()) {
            notes.push(Note {
                reason: "RolloutClusterFailed",
                message: format!(
                    "{} failed on revision {} ({phase:?}): {}",
                    m.name,
                    input.number,
                    message.as_deref().unwrap_or("")
                ),
                warning: true,
            });
        }
        clusters.push(ClusterRollout {
            name: m.name.clone(),
            group: Some(group_name(m.group)),
            revision: m.revision.clone(),
            phase,
            since: since.map(Time),
            message,
        });
    }
    let soaked = |c: &ClusterRollout| {
        c.phase == RolloutPhase::Succeeded
            && c.since
                .as_ref()
                .is_some_and(|s| plus(s.0, min_success) <= now)
    };
    let done = |c: &ClusterRollout| soaked(c) || c.phase.failed();
    for c in &clusters {
        if c.phase == RolloutPhase::Succeeded && !soaked(c) {
            if let Some(s) = &c.since {
                soon(plus(s.0, min_success));
            }
        }
    }

    let total = clusters.len();
    let failures = clusters.iter().filter(|c| c.phase.failed()).count();
    let allowed = strategy
        .max_failures
        .as_ref()
        .and_then(|v| scaled(v, total, false))
        .unwrap_or(0);
    let stopped = failures > allowed;
    let complete = clusters.iter().all(done) && !stopped;

    // The group whose turn it is: the first with a cluster not done.
    let order = |m: &Member| m.group.unwrap_or(usize::MAX);
    let current = input
        .members
        .iter()
        .zip(&clusters)
        .filter(|(_, c)| !done(c))
        .map(|(m, _)| order(m))
        .min();
    let mut taken = Vec::new();
    if let (Some(turn), false, false) = (current, input.paused, stopped) {
        let named = turn != usize::MAX;
        let limit = match (strategy.type_, named, &strategy.max_concurrency) {
            (RolloutType::Progressive, true, _) => usize::MAX,
            (_, _, Some(v)) => scaled(v, total, true).unwrap_or(1).max(1),
            (RolloutType::Progressive, false, None) => scaled(
                &IntOrString::String(DEFAULT_CONCURRENCY.into()),
                total,
                true,
            )
            .unwrap_or(1)
            .max(1),
            _ => usize::MAX,
        };
        let active = clusters
            .iter()
            .filter(|c| {
                c.phase == RolloutPhase::Progressing
                    || (c.phase == RolloutPhase::Succeeded && !soaked(c))
            })
            .count();
        let mut candidates: Vec<usize> = (0..total)
            .filter(|&i| {
                order(&input.members[i]) == turn && clusters[i].phase == RolloutPhase::ToApply
            })
            .collect();
        candidates.sort_by(|&a, &b| clusters[a].name.cmp(&clusters[b].name));
        let free = limit.saturating_sub(active);
        for i in candidates.into_iter().take(free) {
            taken.push(clusters[i].name.clone());
            let c = &mut clusters[i];
            c.phase = RolloutPhase::Progressing;
            c.revision = Some(input.revision.to_owned());
            c.since = Some(Time(now));
            if let Some(d) = deadline {
                soon(plus(now, d));
            }
        }
    }
    if !taken.is_empty() {
        notes.push(Note {
            reason: "RolloutStep",
            message: format!("revision {} sent to {}", input.number, taken.join(", ")),
            warning: false,
        });
    }

    // Stable: what completed last.
    let stable = if complete {
        Some(input.revision.to_owned())
    } else {
        input.previous.and_then(|p| {
            if p.revision != input.revision
                && conditions::is_true(&p.conditions, CONDITION_COMPLETE)
            {
                Some(p.revision.clone())
            } else {
                p.stable_revision.clone()
            }
        })
    };
    let render = input
        .members
        .iter()
        .zip(&clusters)
        .map(|(m, c)| {
            let r = match (&c.revision, m.unmarked, &stable) {
                _ if c.phase != RolloutPhase::ToApply => {
                    Render::Revision(input.revision.to_owned())
                }
                (Some(r), _, _) => Render::Revision(r.clone()),
                (None, true, _) => Render::Keep,
                (None, false, Some(s)) => Render::Revision(s.clone()),
                (None, false, None) => Render::Nothing,
            };
            (m.name.clone(), r)
        })
        .collect();

    let mut conds = previous.map(|p| p.conditions.clone()).unwrap_or_default();
    let on = clusters
        .iter()
        .filter(|c| c.phase == RolloutPhase::Succeeded)
        .count();
    let summary = format!(
        "revision {}: {on} of {total} clusters healthy on it",
        input.number
    );
    let failed_names: Vec<String> = clusters
        .iter()
        .filter(|c| c.phase.failed())
        .map(|c| format!("{} ({:?})", c.name, c.phase))
        .collect();
    let (progressing, reason) = if complete {
        ("False", "Complete")
    } else if stopped {
        ("False", "RolloutFailed")
    } else if input.paused {
        ("Unknown", "Paused")
    } else {
        ("True", "Progressing")
    };
    let group = current
        .filter(|_| !complete)
        .map(|g| group_name((g != usize::MAX).then_some(g)));
    let progress_message = match &group {
        Some(g) if !complete => format!("{summary}; group {g}"),
        _ => summary.clone(),
    };
    conditions::set(
        &mut conds,
        Set {
            type_: CONDITION_PROGRESSING,
            status: progressing,
            reason,
            message: &progress_message,
        },
        now,
    );
    let was_complete =
        previous.is_some_and(|p| conditions::is_true(&p.conditions, CONDITION_COMPLETE));
    let complete_message = if failures > 0 {
        format!(
            "{summary}; failed within maxFailures: {}",
            failed_names.join(", ")
        )
    } else {
        summary.clone()
    };
    conditions::set(
        &mut conds,
        Set {
            type_: CONDITION_COMPLETE,
            status: if complete { "True" } else { "False" },
            reason: if complete {
                "AllClustersUpdated"
            } else {
                "InProgress"
            },
            message: &complete_message,
        },
        now,
    );
    let was_failed = previous.is_some_and(|p| conditions::is_true(&p.conditions, CONDITION_FAILED));
    let failed_message = if stopped {
        format!(
            "{failures} clusters failed, more than maxFailures ({allowed}): {}; the rollout stopped, clusters not reached keep their revision",
            failed_names.join(", ")
        )
    } else {
        format!("{failures} clusters failed, maxFailures {allowed}")
    };
    conditions::set(
        &mut conds,
        Set {
            type_: CONDITION_FAILED,
            status: if stopped { "True" } else { "False" },
            reason: if stopped {
                "MaxFailuresExceeded"
            } else {
                "WithinMaxFailures"
            },
            message: &failed_message,
        },
        now,
    );
    if complete && !was_complete {
        notes.push(Note {
            reason: "RolloutComplete",
            message: complete_message,
            warning: false,
        });
    }
    if stopped && !was_failed {
        notes.push(Note {
            reason: "RolloutFailed",
            message: failed_message,
            warning: true,
        });
    }
    let status = RolloutStatus {
        revision: input.revision.to_owned(),
        revision_number: input.number,
        stable_revision: stable,
        current_group: group,
        failures: i32::try_from(failures).unwrap_or(i32::MAX),
        clusters,
        conditions: conds,
    };
    Plan {
        status,
        render,
        wake,
        notes,
    }
}

#[cfg(test)]
mod tests;
