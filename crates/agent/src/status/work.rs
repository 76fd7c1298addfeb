//! Assembling a Work's `status` from what applying it came to.
//!
//! The caller (the agent's loop, or a push worker) applies a Work, hands the results here, and
//! writes the status back to the hub only when it differs from the last one written. That
//! comparison is plain `==` ([`same_status`]), which works only because the output is a pure
//! function of the input: every `lastTransitionTime` is carried over from `previous` while its
//! condition's status holds, and a new one is the caller's `now`, cut to whole seconds as the
//! API server stores it (so a status read back from the hub compares equal to the one written).

use flotilla_apis::work::v1alpha1::{
    FeedbackRule, ManifestStatus, ResourceIdentifier, StatusFeedback, WorkStatus,
    CONDITION_APPLIED, CONDITION_AVAILABLE, CONDITION_DEGRADED, REASON_APPLIED,
    REASON_APPLY_FAILED, REASON_AVAILABLE, REASON_CONFLICT, REASON_NOT_AVAILABLE, REASON_NOT_FOUND,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

use super::feedback::{feedback, rules_for};
use super::health::assess;
use super::{REASON_AS_EXPECTED, REASON_NOT_APPLIED};
use crate::ManifestResult;

/// How many manifests a Work-level message names before it says "and N more".
const NAMED_IN_MESSAGE: usize = 3;
/// The longest condition message, in bytes, as metav1.Condition validation allows.
const MAX_MESSAGE: usize = 32_768;

/// The Work's status after applying it: one [`ManifestStatus`] per result (same order) and the
/// Work's `Applied` and `Available` conditions, every condition at `observedGeneration`
/// `generation` (the Work's). `previous` is the status the hub has now; its transition times
/// are kept for conditions whose status did not change (manifests matched by group, kind,
/// namespace and name, so reordering the Work keeps them). `now` stamps the others.
pub fn work_status(
    previous: Option<&WorkStatus>,
    results: &[ManifestResult],
    rules: &[FeedbackRule],
    generation: Option<i64>,
    now: Time,
) -> WorkStatus {
    let stamp = Stamp {
        generation,
        now: whole_seconds(now),
    };
    let manifest_statuses: Vec<ManifestStatus> = results
        .iter()
        .map(|result| {
            let before = previous
                .into_iter()
                .flat_map(|p| &p.manifest_statuses)
                .find(|m| same_manifest(&m.identifier, &result.identifier))
                .map_or(&[][..], |m| &m.conditions[..]);
            manifest_status(result, rules, before, &stamp)
        })
        .collect();
    let before = previous.map_or(&[][..], |p| &p.conditions[..]);
    WorkStatus {
        conditions: vec![
            stamp.condition(work_applied(results), before),
            stamp.condition(work_available(&manifest_statuses), before),
        ],
        manifest_statuses,
    }
}

/// Whether two statuses are the same, i.e. whether writing `b` over `a` would change nothing.
/// Plain equality: [`work_status`] keeps transition times, so equal inputs give equal outputs.
pub fn same_status(a: &WorkStatus, b: &WorkStatus) -> bool {
    a == b
}

/// A condition before it is stamped with its generation and transition time.
struct Draft {
    type_: &'static str,
    status: &'static str,
    reason: String,
    message: String,
}

/// What every condition of one status is stamped with.
struct Stamp {
    generation: Option<i64>,
    now: Time,
}

impl Stamp {
    /// `draft` as a condition; its transition time is the one in `before` if that condition
    /// had the same status there, else now.
    fn condition(&self, draft: Draft, before: &[Condition]) -> Condition {
        let last_transition_time = before
            .iter()
            .find(|c| c.type_ == draft.type_ && c.status == draft.status)
            .map_or_else(|| self.now.clone(), |c| c.last_transition_time.clone());
        Condition {
            type_: draft.type_.to_owned(),
            status: draft.status.to_owned(),
            reason: draft.reason,
            message: clip(draft.message, MAX_MESSAGE),
            observed_generation: self.generation,
            last_transition_time,
        }
    }
}

fn manifest_status(
    result: &ManifestResult,
    rules: &[FeedbackRule],
    before: &[Condition],
    stamp: &Stamp,
) -> ManifestStatus {
    let applied = Draft {
        type_: CONDITION_APPLIED,
        status: true_false(result.applied),
        reason: match (result.reason.as_str(), result.applied) {
            // A condition's reason may not be empty.
            ("", true) => REASON_APPLIED.to_owned(),
            ("", false) => REASON_APPLY_FAILED.to_owned(),
            (reason, _) => reason.to_owned(),
        },
        message: result.message.clone(),
    };
    let mut drafts = vec![applied];
    let mut values = Vec::new();
    match &result.object {
        Some(object) => {
            let health = assess(object);
            drafts.push(Draft {
                type_: CONDITION_AVAILABLE,
                status: true_false(health.available),
                reason: health.reason.to_owned(),
                message: health.message.clone(),
            });
            drafts.push(Draft {
                type_: CONDITION_DEGRADED,
                status: true_false(health.degraded),
                reason: if health.degraded {
                    REASON_NOT_AVAILABLE
                } else {
                    REASON_AS_EXPECTED
                }
                .to_owned(),
                message: if health.degraded {
                    health.message
                } else {
                    String::new()
                },
            });
            values = feedback(object, rules_for(rules, &result.identifier));
        }
        None if result.reason == REASON_NOT_FOUND => drafts.push(Draft {
            type_: CONDITION_AVAILABLE,
            status: "False",
            reason: REASON_NOT_FOUND.to_owned(),
            message: result.message.clone(),
        }),
        None => drafts.push(Draft {
            type_: CONDITION_AVAILABLE,
            status: "Unknown",
            reason: REASON_NOT_APPLIED.to_owned(),
            message: "not applied".to_owned(),
        }),
    }
    ManifestStatus {
        identifier: result.identifier.clone(),
        conditions: drafts
            .into_iter()
            .map(|d| stamp.condition(d, before))
            .collect(),
        feedback: (!values.is_empty()).then_some(StatusFeedback { values }),
        observed_resource_version: result.resource_version.clone(),
        observed_generation: result.generation,
    }
}

/// `Applied` for the whole Work: true when every manifest applied. When some did not, the
/// reason is `Conflict` if any of them conflicts (that one needs a person: an object in the
/// member that flotilla does not own), else their shared reason, else `ApplyFailed`.
fn work_applied(results: &[ManifestResult]) -> Draft {
    let failed: Vec<&ManifestResult> = results.iter().filter(|r| !r.applied).collect();
    let Some(first) = failed.first() else {
        return Draft {
            type_: CONDITION_APPLIED,
            status: "True",
            reason: REASON_APPLIED.to_owned(),
            message: counted(results.len(), "applied"),
        };
    };
    let reason = if failed.iter().any(|r| r.reason == REASON_CONFLICT) {
        REASON_CONFLICT
    } else if !first.reason.is_empty() && failed.iter().all(|r| r.reason == first.reason) {
        &first.reason
    } else {
        REASON_APPLY_FAILED
    };
    let named = failed
        .iter()
        .map(|r| (describe(&r.identifier), r.message.as_str()));
    Draft {
        type_: CONDITION_APPLIED,
        status: "False",
        reason: reason.to_owned(),
        message: listed(failed.len(), results.len(), "not applied", named),
    }
}

/// `Available` for the whole Work: true when every manifest is available.
fn work_available(statuses: &[ManifestStatus]) -> Draft {
    let unavailable: Vec<(&ManifestStatus, Option<&Condition>)> = statuses
        .iter()
        .map(|m| {
            let available = m.conditions.iter().find(|c| c.type_ == CONDITION_AVAILABLE);
            (m, available)
        })
        .filter(|(_, available)| available.is_none_or(|c| c.status != "True"))
        .collect();
    if unavailable.is_empty() {
        return Draft {
            type_: CONDITION_AVAILABLE,
            status: "True",
            reason: REASON_AVAILABLE.to_owned(),
            message: counted(statuses.len(), "available"),
        };
    }
    let named = unavailable.iter().map(|(m, c)| {
        (
            describe(&m.identifier),
            c.map_or("", |c| c.message.as_str()),
        )
    });
    Draft {
        type_: CONDITION_AVAILABLE,
        status: "False",
        reason: REASON_NOT_AVAILABLE.to_owned(),
        message: listed(unavailable.len(), statuses.len(), "not available", named),
    }
}

/// `N of N manifests <what>`, or `no manifests` for an empty Work.
fn counted(total: usize, what: &str) -> String {
    match total {
        0 => "no manifests".to_owned(),
        1 => format!("1 of 1 manifest {what}"),
        n => format!("{n} of {n} manifests {what}"),
    }
}

/// `K of N manifests <what>: Kind ns/name: message; ...`, naming the first few.
fn listed<'a>(
    count: usize,
    total: usize,
    what: &str,
    named: impl Iterator<Item = (String, &'a str)>,
) -> String {
    let noun = if total == 1 { "manifest" } else { "manifests" };
    let entries: Vec<String> = named
        .take(NAMED_IN_MESSAGE)
        .map(|(who, message)| match message {
            "" => who,
            message => format!("{who}: {}", clip(message.to_owned(), 512)),
        })
        .collect();
    let more = match count.saturating_sub(NAMED_IN_MESSAGE) {
        0 => String::new(),
        n => format!("; and {n} more"),
    };
    format!(
        "{count} of {total} {noun} {what}: {}{more}",
        entries.join("; ")
    )
}

/// `Kind namespace/name`, or `Kind name` when cluster-scoped.
fn describe(id: &ResourceIdentifier) -> String {
    match id.namespace.as_deref().filter(|ns| !ns.is_empty()) {
        Some(ns) => format!("{} {ns}/{}", id.kind, id.name),
        None => format!("{} {}", id.kind, id.name),
    }
}

/// Whether two identifiers name the same object. Not the ordinal: it moves when manifests are
/// added or removed before this one. Not version or resource either: a manifest moving from
/// `v1beta1` to `v1` is the same object, and the resource is empty when discovery failed.
fn same_manifest(a: &ResourceIdentifier, b: &ResourceIdentifier) -> bool {
    let ns = |id: &ResourceIdentifier| id.namespace.clone().filter(|ns| !ns.is_empty());
    a.group == b.group && a.kind == b.kind && a.name == b.name && ns(a) == ns(b)
}

fn true_false(b: bool) -> &'static str {
    if b {
        "True"
    } else {
        "False"
    }
}

/// `time` without its fraction of a second, as `metav1.Time` is serialized.
fn whole_seconds(time: Time) -> Time {
    Time(Timestamp::from_second(time.0.as_second()).unwrap_or(time.0))
}

/// `message` cut to at most `max` bytes, on a character boundary, marked with `…` when cut.
fn clip(mut message: String, max: usize) -> String {
    if message.len() > max {
        let mut end = max.saturating_sub('…'.len_utf8());
        while !message.is_char_boundary(end) {
            end -= 1;
        }
        message.truncate(end);
        message.push('…');
    }
    message
}

#[cfg(test)]
mod tests;
