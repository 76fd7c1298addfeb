//! Status values read back from applied objects into `ManifestStatus.feedback`.
//!
//! Feedback is how the hub learns a member's numbers (ready replicas, a load balancer's address)
//! without reading the member: status aggregation sums these values into the template's status,
//! so `kubectl get deploy` on the hub shows what runs everywhere. Well-known kinds are fed back
//! without any rule, so that works out of the box; a Work's `statusFeedback` rules add more
//! (kubectl-style JSONPath, see [`super::jsonpath`]). Conditions are never fed back by
//! default: they are large, change often, and every change would be a status write to the hub.

use flotilla_apis::work::v1alpha1::{
    FeedbackRule, FeedbackValue, FieldValue, JsonPathRule, ResourceIdentifier,
};
use serde_json::Value;

use super::jsonpath;
use super::object::group_kind;

/// Values fed back by default for one kind: name, and JSON pointer into the object.
type Fields = &'static [(&'static str, &'static str)];

const DEPLOYMENT: Fields = &[
    ("replicas", "/status/replicas"),
    ("updatedReplicas", "/status/updatedReplicas"),
    ("readyReplicas", "/status/readyReplicas"),
    ("availableReplicas", "/status/availableReplicas"),
    ("unavailableReplicas", "/status/unavailableReplicas"),
    ("observedGeneration", "/status/observedGeneration"),
];

const STATEFUL_SET: Fields = &[
    ("replicas", "/status/replicas"),
    ("readyReplicas", "/status/readyReplicas"),
    ("currentReplicas", "/status/currentReplicas"),
    ("updatedReplicas", "/status/updatedReplicas"),
    ("availableReplicas", "/status/availableReplicas"),
    ("observedGeneration", "/status/observedGeneration"),
];

const DAEMON_SET: Fields = &[
    ("currentNumberScheduled", "/status/currentNumberScheduled"),
    ("desiredNumberScheduled", "/status/desiredNumberScheduled"),
    ("numberAvailable", "/status/numberAvailable"),
    ("numberReady", "/status/numberReady"),
    ("updatedNumberScheduled", "/status/updatedNumberScheduled"),
    ("numberMisscheduled", "/status/numberMisscheduled"),
    ("observedGeneration", "/status/observedGeneration"),
];

const REPLICA_SET: Fields = &[
    ("replicas", "/status/replicas"),
    ("readyReplicas", "/status/readyReplicas"),
    ("availableReplicas", "/status/availableReplicas"),
];

const JOB: Fields = &[
    ("active", "/status/active"),
    ("succeeded", "/status/succeeded"),
    ("failed", "/status/failed"),
    ("startTime", "/status/startTime"),
    ("completionTime", "/status/completionTime"),
];

// `clusterIPs` holds every family's ClusterIP (dual-stack); the hub answers a member's own
// DNS queries with them (local-first).
const SERVICE: Fields = &[
    ("clusterIP", "/spec/clusterIP"),
    ("clusterIPs", "/spec/clusterIPs"),
    ("loadBalancerIngress", "/status/loadBalancer/ingress"),
];

const HORIZONTAL_POD_AUTOSCALER: Fields = &[
    ("currentReplicas", "/status/currentReplicas"),
    ("desiredReplicas", "/status/desiredReplicas"),
];

/// The values fed back by default for objects of `group` and `kind` (none for other kinds).
fn well_known(group: &str, kind: &str) -> Fields {
    match (group, kind) {
        ("apps", "Deployment") => DEPLOYMENT,
        ("apps", "StatefulSet") => STATEFUL_SET,
        ("apps", "DaemonSet") => DAEMON_SET,
        ("apps", "ReplicaSet") => REPLICA_SET,
        ("batch", "Job") => JOB,
        ("", "Service") => SERVICE,
        ("autoscaling", "HorizontalPodAutoscaler") => HORIZONTAL_POD_AUTOSCALER,
        _ => &[],
    }
}

/// The values to feed back from `object`: the well-known ones for its kind (those it has), then
/// one per rule whose path selects something, in rule order. A rule named like a well-known
/// value (or an earlier rule) replaces it, even when the rule selects nothing: the rule's
/// author decided what that name means. A rule whose path is not valid JSONPath yields nothing.
///
/// Takes `&[JsonPathRule]` as well as the `Vec<&JsonPathRule>` that [`rules_for`] returns.
pub fn feedback<'a>(
    object: &Value,
    rules: impl IntoIterator<Item = &'a JsonPathRule>,
) -> Vec<FeedbackValue> {
    let (group, kind) = group_kind(object);
    let mut values: Vec<FeedbackValue> = well_known(group, kind)
        .iter()
        .filter_map(|(name, pointer)| {
            let value = object.pointer(pointer).filter(|v| !v.is_null())?;
            Some(FeedbackValue {
                name: (*name).to_owned(),
                value: field_value(value),
            })
        })
        .collect();
    for rule in rules {
        values.retain(|v| v.name != rule.name);
        if let Some(value) = evaluate(object, &rule.path) {
            values.push(FeedbackValue {
                name: rule.name.clone(),
                value,
            });
        }
    }
    values
}

/// What a kubectl-style JSONPath `path` reads from `object`: nothing when it selects nothing
/// (or is not valid), the value when it selects one, and the JSON array of them when it
/// selects several.
pub fn evaluate(object: &Value, path: &str) -> Option<FieldValue> {
    match jsonpath::query(object, path).ok()?.as_slice() {
        [] => None,
        [one] => Some(field_value(one)),
        many => Some(raw(&Value::Array(
            many.iter().map(|v| (*v).clone()).collect(),
        ))),
    }
}

/// `value` as a [`FieldValue`]: integers, strings and booleans as themselves, anything else
/// (objects, arrays, floats, null) as compact JSON.
pub fn field_value(value: &Value) -> FieldValue {
    match value {
        Value::Number(n) => match n.as_i64() {
            Some(integer) => FieldValue {
                integer: Some(integer),
                ..FieldValue::default()
            },
            None => raw(value),
        },
        Value::String(s) => FieldValue {
            string: Some(s.clone()),
            ..FieldValue::default()
        },
        Value::Bool(b) => FieldValue {
            boolean: Some(*b),
            ..FieldValue::default()
        },
        _ => raw(value),
    }
}

fn raw(value: &Value) -> FieldValue {
    FieldValue {
        json_raw: Some(value.to_string()),
        ..FieldValue::default()
    }
}

/// The JSONPath rules of every `rules` entry naming the manifest `id`, in order. A rule names
/// a manifest by group, plural resource, namespace (absent for cluster-scoped objects) and
/// name, compared exactly with what the member's discovery resolved.
pub fn rules_for<'a>(rules: &'a [FeedbackRule], id: &ResourceIdentifier) -> Vec<&'a JsonPathRule> {
    // An empty namespace is as good as none: both mean cluster-scoped.
    let namespace = |ns: &Option<String>| ns.clone().filter(|ns| !ns.is_empty());
    rules
        .iter()
        .filter(|rule| {
            let r = &rule.resource;
            r.group == id.group
                && r.resource == id.resource
                && r.name == id.name
                && namespace(&r.namespace) == namespace(&id.namespace)
        })
        .flat_map(|rule| &rule.json_paths)
        .collect()
}

#[cfg(test)]
mod tests;
