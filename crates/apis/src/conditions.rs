//! Setting a condition in a status's `conditions` list, as Kubernetes' `meta.SetStatusCondition`
//! does: one entry per type, its `lastTransitionTime` kept while its status does not change (so
//! an unchanged status compares equal and is not written again), entries sorted by type.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// What a condition says now.
#[derive(Clone, Copy, Debug)]
pub struct Set<'a> {
    /// The condition type (`Ready`, `Joined`, ...).
    pub type_: &'a str,
    /// `True`, `False` or `Unknown`.
    pub status: &'a str,
    /// A CamelCase reason.
    pub reason: &'a str,
    /// For humans.
    pub message: &'a str,
}

/// Sets `set` in `conditions` at time `now`; returns whether anything changed.
pub fn set(conditions: &mut Vec<Condition>, set: Set<'_>, now: Timestamp) -> bool {
    let previous = conditions.iter().find(|c| c.type_ == set.type_);
    if previous.is_some_and(|c| {
        c.status == set.status && c.reason == set.reason && c.message == set.message
    }) {
        return false;
    }
    let transition = previous
        .filter(|c| c.status == set.status)
        .map(|c| c.last_transition_time.clone())
        .unwrap_or(Time(now));
    conditions.retain(|c| c.type_ != set.type_);
    conditions.push(Condition {
        type_: set.type_.to_owned(),
        status: set.status.to_owned(),
        reason: set.reason.to_owned(),
        message: set.message.to_owned(),
        observed_generation: None,
        last_transition_time: transition,
    });
    conditions.sort_by(|a, b| a.type_.cmp(&b.type_));
    true
}

/// The condition of `type_`, if any.
pub fn find<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Is the condition of `type_` there with status `True`?
pub fn is_true(conditions: &[Condition], type_: &str) -> bool {
    find(conditions, type_).is_some_and(|c| c.status == "True")
}

#[cfg(test)]
mod tests;
