//! Status aggregation: the members' statuses of a propagated object (rebuilt by
//! [`super::feedback`]) summed into the hub template's `status`.
//!
//! [`aggregate`] sums the members' statuses into the status the hub template shows, so
//! `kubectl get deploy`, `kubectl rollout status` and `kubectl wait --for=condition=Complete`
//! on the hub tell what runs in every member.
//!
//! Everything here is a pure function of its arguments (the caller passes the time), so the
//! result is the same however often a reconciler computes it, and an unchanged world yields an
//! unchanged status that need not be written again.

use std::cmp::Ordering;

use crate::propagation::workload::group_kind;
use k8s_openapi::jiff::Timestamp;
use serde_json::{json, Map, Value};

/// One member cluster's part in [`aggregate`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Member<'a> {
    /// The Cluster's name.
    pub cluster: &'a str,
    /// The object's status in the member (as [`super::feedback::member_status`] rebuilds it); `None` when it
    /// reported none.
    pub status: Option<&'a Value>,
    /// The member has applied the current rendering of the template and its controller has
    /// observed it (the caller decides, e.g. from the Work's generation and the manifest's
    /// `observedGeneration`), so `status` describes the current spec.
    pub up_to_date: bool,
}

/// The `status` to write on the hub `template`, summed over its `members`; `None` for kinds
/// whose status flotilla does not aggregate. `now` (RFC 3339) stamps conditions whose status
/// changes; conditions that keep their status keep their times.
///
/// Aggregated kinds: Deployment, StatefulSet, ReplicaSet, DaemonSet (replica counts summed,
/// `observedGeneration`, and for Deployments `Available` and `Progressing`), Job (counts,
/// earliest start, `Complete` once every member completed), Service (the members' load
/// balancer ingress, for type `LoadBalancer`; with a `dns_zone`, the fleet name instead, see
/// [`fleet_hostname`]) and HorizontalPodAutoscaler (current and desired replicas). Missing
/// numbers count as 0. The order of `members` does not matter.
///
/// `observedGeneration` becomes the template's `metadata.generation` only when there are
/// members and every one is [`Member::up_to_date`] and reports a status; until then the
/// template's previous `status.observedGeneration` stays, so `kubectl rollout status` on the
/// hub waits for every member instead of reading sums of stale numbers.
pub fn aggregate(
    template: &Value,
    members: &[Member<'_>],
    now: &str,
    dns_zone: Option<&str>,
) -> Option<Value> {
    let mut sorted: Vec<&Member<'_>> = members.iter().collect();
    // Stable by cluster name: the Service's ingress list keeps that order.
    sorted.sort_by(|a, b| a.cluster.cmp(b.cluster));
    let members = sorted.as_slice();
    let status = match group_kind(template) {
        ("apps", "Deployment") => deployment(template, members, now),
        ("apps", "StatefulSet") => workload(template, members, STATEFUL_SET),
        ("apps", "ReplicaSet") => workload(template, members, REPLICA_SET),
        ("apps", "DaemonSet") => workload(template, members, DAEMON_SET),
        ("batch", "Job") => job(template, members, now),
        ("", "Service") => service(template, members, dns_zone),
        ("autoscaling", "HorizontalPodAutoscaler") => Value::Object(sums(members, AUTOSCALER)),
        _ => return None,
    };
    Some(status)
}

/// The status fields summed over members, per kind.
type Fields = &'static [&'static str];

const DEPLOYMENT: Fields = &[
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
];
const STATEFUL_SET: Fields = &[
    "replicas",
    "readyReplicas",
    "currentReplicas",
    "updatedReplicas",
    "availableReplicas",
];
const REPLICA_SET: Fields = &["replicas", "readyReplicas", "availableReplicas"];
const DAEMON_SET: Fields = &[
    "currentNumberScheduled",
    "desiredNumberScheduled",
    "numberAvailable",
    "numberReady",
    "updatedNumberScheduled",
    "numberMisscheduled",
];
const JOB: Fields = &["active", "succeeded", "failed"];
const AUTOSCALER: Fields = &["currentReplicas", "desiredReplicas"];

fn int(object: &Value, pointer: &str) -> Option<i64> {
    object.pointer(pointer).and_then(Value::as_i64)
}

/// Each of `fields` summed over the members' statuses; every field is written, 0 when no
/// member reports it.
fn sums(members: &[&Member<'_>], fields: Fields) -> Map<String, Value> {
    fields
        .iter()
        .map(|field| {
            let sum = members
                .iter()
                .filter_map(|m| m.status?.get(*field)?.as_i64())
                .fold(0_i64, i64::saturating_add);
            ((*field).to_owned(), sum.into())
        })
        .collect()
}

/// Has every member (and there is at least one) applied and observed the current rendering,
/// and reported a status for it?
fn all_observed(members: &[&Member<'_>]) -> bool {
    !members.is_empty() && members.iter().all(|m| m.up_to_date && m.status.is_some())
}

/// The `observedGeneration` to write: the template's generation once every member observed it,
/// else the one written before.
fn observed_generation(template: &Value, members: &[&Member<'_>]) -> Option<i64> {
    all_observed(members)
        .then(|| int(template, "/metadata/generation"))
        .flatten()
        .or_else(|| int(template, "/status/observedGeneration"))
}

/// StatefulSet, ReplicaSet, DaemonSet: sums and `observedGeneration`.
fn workload(template: &Value, members: &[&Member<'_>], fields: Fields) -> Value {
    let mut status = sums(members, fields);
    if let Some(generation) = observed_generation(template, members) {
        status.insert("observedGeneration".to_owned(), generation.into());
    }
    Value::Object(status)
}

/// A Deployment's sums, `observedGeneration`, and its `Available` and `Progressing`
/// conditions, such that kubectl's rollout check (observedGeneration >= generation,
/// updatedReplicas >= spec.replicas, replicas == updatedReplicas, availableReplicas >=
/// updatedReplicas) passes exactly when every member has rolled out.
fn deployment(template: &Value, members: &[&Member<'_>], now: &str) -> Value {
    let mut status = sums(members, DEPLOYMENT);
    let count = |field: &str| status.get(field).and_then(Value::as_i64).unwrap_or(0);
    let desired = int(template, "/spec/replicas").unwrap_or(1);
    let (replicas, updated, available) = (
        count("replicas"),
        count("updatedReplicas"),
        count("availableReplicas"),
    );
    let rolled_out =
        all_observed(members) && updated >= desired && replicas == updated && available >= updated;
    let previous = template.pointer("/status/conditions");
    let available_condition = if available >= desired {
        (
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
        )
    } else {
        (
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
        )
    };
    let progressing_condition = if rolled_out {
        (
            "True",
            "NewReplicaSetAvailable",
            "Deployment has successfully progressed in every member cluster.",
        )
    } else {
        (
            "True",
            "ReplicaSetUpdated",
            "Deployment is progressing in the member clusters.",
        )
    };
    let conditions = vec![
        deployment_condition(previous, "Available", available_condition, now),
        deployment_condition(previous, "Progressing", progressing_condition, now),
    ];
    if let Some(generation) = observed_generation(template, members) {
        status.insert("observedGeneration".to_owned(), generation.into());
    }
    status.insert("conditions".to_owned(), Value::Array(conditions));
    Value::Object(status)
}

/// The previous condition of `type_` in `conditions` (a status's `conditions` list).
fn previous_condition<'a>(conditions: Option<&'a Value>, type_: &str) -> Option<&'a Value> {
    conditions?
        .as_array()?
        .iter()
        .find(|c| c["type"].as_str() == Some(type_))
}

/// A Deployment condition, with times as the deployment controller keeps them: both kept while
/// status and reason stay, `lastTransitionTime` kept while the status stays, else both `now`.
fn deployment_condition(
    previous: Option<&Value>,
    type_: &str,
    (status, reason, message): (&str, &str, &str),
    now: &str,
) -> Value {
    let previous = previous_condition(previous, type_).filter(|c| c["status"] == status);
    let time = |field: &str, keep: bool| {
        previous
            .filter(|_| keep)
            .and_then(|c| c[field].as_str())
            .unwrap_or(now)
            .to_owned()
    };
    let same_reason = previous.is_some_and(|c| c["reason"] == reason);
    json!({
        "type": type_,
        "status": status,
        "lastUpdateTime": time("lastUpdateTime", same_reason),
        "lastTransitionTime": time("lastTransitionTime", true),
        "reason": reason,
        "message": message,
    })
}

/// A Job's counts, the earliest `startTime`, and once every member has completed the latest
/// `completionTime` and `Complete=True`.
fn job(template: &Value, members: &[&Member<'_>], now: &str) -> Value {
    let mut status = sums(members, JOB);
    if let Some(start) = members
        .iter()
        .filter_map(|m| time(m, "startTime"))
        .min_by(|a, b| chronological(a, b))
    {
        status.insert("startTime".to_owned(), start.into());
    }
    let completions: Option<Vec<&str>> =
        members.iter().map(|m| time(m, "completionTime")).collect();
    if let Some(completion) =
        completions.and_then(|c| c.into_iter().max_by(|a, b| chronological(a, b)))
    {
        status.insert("completionTime".to_owned(), completion.into());
        let previous = previous_condition(template.pointer("/status/conditions"), "Complete")
            .filter(|c| c["status"] == "True");
        let kept = |field: &str| {
            previous
                .and_then(|c| c[field].as_str())
                .unwrap_or(now)
                .to_owned()
        };
        status.insert(
            "conditions".to_owned(),
            json!([{
                "type": "Complete",
                "status": "True",
                "lastProbeTime": kept("lastProbeTime"),
                "lastTransitionTime": kept("lastTransitionTime"),
                "reason": "CompletionsReached",
                "message": "Reached expected number of succeeded pods in every member cluster",
            }]),
        );
    }
    Value::Object(status)
}

/// The time (text) `field` of a member's status.
fn time<'a>(member: &Member<'a>, field: &str) -> Option<&'a str> {
    member.status?.get(field)?.as_str()
}

/// Orders RFC 3339 times by the instant they name (text order for those that do not parse).
fn chronological(a: &str, b: &str) -> Ordering {
    match (a.parse::<Timestamp>(), b.parse::<Timestamp>()) {
        (Ok(x), Ok(y)) => x.cmp(&y).then_with(|| a.cmp(b)),
        _ => a.cmp(b),
    }
}

/// A Service's `loadBalancer`: for type `LoadBalancer`, every member's ingress points once, in
/// the order of the members' cluster names. With a `dns_zone`, once a member reports an
/// ingress IP, the one point is the fleet name ([`fleet_hostname`]) that flotilla's DNS
/// answers with the healthy members' addresses; the per-cluster addresses stay in the
/// binding's `aggregatedStatus`. Members that report only hostnames (which the fleet name
/// cannot carry) keep the union.
fn service(template: &Value, members: &[&Member<'_>], dns_zone: Option<&str>) -> Value {
    let mut ingress: Vec<Value> = Vec::new();
    if template.pointer("/spec/type").and_then(Value::as_str) == Some("LoadBalancer") {
        let points = members
            .iter()
            .filter_map(|m| m.status?.pointer("/loadBalancer/ingress")?.as_array())
            .flatten();
        for point in points {
            if !ingress.contains(point) {
                ingress.push(point.clone());
            }
        }
    }
    let fleet = dns_zone
        .filter(|_| {
            ingress
                .iter()
                .any(|p| p.get("ip").is_some_and(Value::is_string))
        })
        .and_then(|zone| fleet_hostname(template, zone));
    if let Some(hostname) = fleet {
        json!({ "loadBalancer": { "ingress": [{ "hostname": hostname }] } })
    } else if ingress.is_empty() {
        json!({ "loadBalancer": {} })
    } else {
        json!({ "loadBalancer": { "ingress": ingress } })
    }
}

/// The fleet name of a hub Service, `<name>.<namespace>.<zone>` (no trailing dot); `None`
/// when the template has no name or namespace.
pub fn fleet_hostname(template: &Value, zone: &str) -> Option<String> {
    let name = template.pointer("/metadata/name")?.as_str()?;
    let namespace = template.pointer("/metadata/namespace")?.as_str()?;
    Some(format!("{name}.{namespace}.{}", zone.trim_end_matches('.')))
}

#[cfg(test)]
mod tests;
