//! What one member reports about a propagated object, read from its Work's status.
//!
//! Each member's agent writes, per manifest of its Work, the object's conditions (`Applied`,
//! `Available`) and the status values it fed back (see the agent's `status::feedback`).
//! [`member_status`] rebuilds a member object's `status` from those values, [`health`] reads
//! its health, and [`item`] makes the binding's per-cluster entry; [`super::aggregate`] sums
//! the members' statuses, [`super::eviction`] reads whether a replacement is up.
//!
//! Pure functions of their arguments.

use flotilla_apis::conditions;
use flotilla_apis::work::v1alpha1::{
    AggregatedStatusItem, FieldValue, ManifestStatus, ResourceHealth, CONDITION_APPLIED,
    CONDITION_AVAILABLE,
};
use serde_json::{json, Map, Value};

/// `appliedMessage` of a cluster whose agent has not reported the manifest yet.
const NOT_APPLIED_YET: &str = "not yet applied in the member";

/// The member object's `status`, rebuilt from the values its agent fed back: each value under
/// its name at the top level (`{"replicas": 2, "readyReplicas": 2, ...}`), so values of users'
/// feedback rules show up as they are. For a Service, `loadBalancerIngress` goes to
/// `loadBalancer.ingress`, and its ClusterIPs (spec fields, fed back as `clusterIPs` and, by
/// older agents, `clusterIP` alone) go to [`CLUSTER_IPS`], so the DNS server can answer a
/// member's own queries with the member's ClusterIP; a headless Service (`None`) has none.
///
/// A value named [`WHOLE_STATUS`] holding an object is the member's whole `status` (the feedback
/// rule the binding controller adds for kinds a ResourceInterpreter reads), its fields at the
/// top level.
///
/// `None` when the agent fed nothing back.
pub fn member_status(manifest: &ManifestStatus) -> Option<Value> {
    let values = &manifest.feedback.as_ref()?.values;
    if values.is_empty() {
        return None;
    }
    let id = &manifest.identifier;
    let service = id.group.is_empty() && id.kind == "Service";
    let mut status = Map::new();
    let mut cluster_ips: Vec<Value> = Vec::new();
    for feedback in values {
        let Some(value) = json_value(&feedback.value) else {
            continue;
        };
        match (service, feedback.name.as_str()) {
            (true, "clusterIP") => push_cluster_ip(&mut cluster_ips, value),
            (true, "clusterIPs") => match value {
                Value::Array(ips) => ips
                    .into_iter()
                    .for_each(|ip| push_cluster_ip(&mut cluster_ips, ip)),
                other => push_cluster_ip(&mut cluster_ips, other),
            },
            (true, "loadBalancerIngress") => {
                status.insert("loadBalancer".to_owned(), json!({ "ingress": value }));
            }
            (_, WHOLE_STATUS) if value.is_object() => {
                if let Value::Object(whole) = value {
                    status.extend(whole);
                }
            }
            (_, name) => {
                status.insert(name.to_owned(), value);
            }
        }
    }
    if !cluster_ips.is_empty() {
        status.insert(CLUSTER_IPS.to_owned(), Value::Array(cluster_ips));
    }
    Some(Value::Object(status))
}

/// The name of the feedback rule reading a member object's whole `status` (`.status`).
pub const WHOLE_STATUS: &str = "status";

/// The member's copy of a propagated object as a ResourceInterpreter's health and status rules
/// read it: the manifest its Work carries, with the `status` its agent fed back
/// ([`member_status`]) and the generation it observed as `metadata.generation`.
pub fn member_object(manifest: &Value, reported: &ManifestStatus) -> Value {
    let mut obj = manifest.clone();
    if let Some(status) = member_status(reported) {
        obj["status"] = status;
    }
    if let Some(generation) = reported.observed_generation {
        obj["metadata"]["generation"] = json!(generation);
    }
    obj
}

/// A member's copy's health as its kind's ResourceInterpreter tells it (`None`: the
/// interpreter has no health rule), with why not; a rule that fails on the object is `Unknown`
/// (and says the error).
pub fn interpreted_health(
    interpreter: &flotilla_interpreter::Interpreter,
    obj: &Value,
) -> Option<(ResourceHealth, String)> {
    Some(match interpreter.health(obj)? {
        Ok(h) if h.healthy => (ResourceHealth::Healthy, String::new()),
        Ok(h) => (ResourceHealth::Unhealthy, h.reason),
        Err(e) => (
            ResourceHealth::Unknown,
            format!("the health rule fails: {e}"),
        ),
    })
}

/// Where [`member_status`] puts a member Service's ClusterIPs (primary first, each once):
/// `{"clusterIPs": ["10.96.0.10", "fd00::10"], "loadBalancer": {...}}`.
pub const CLUSTER_IPS: &str = "clusterIPs";

/// Adds a fed-back ClusterIP unless it is empty, `None` (headless) or already there.
fn push_cluster_ip(ips: &mut Vec<Value>, ip: Value) {
    let keep = ip
        .as_str()
        .is_some_and(|s| !s.is_empty() && s != "None" && !ips.contains(&ip));
    if keep {
        ips.push(ip);
    }
}

/// A fed-back value as JSON; `json_raw` that does not parse is kept as a string, so the user
/// still sees what the rule read. `None` when no field is set.
fn json_value(value: &FieldValue) -> Option<Value> {
    if let Some(integer) = value.integer {
        return Some(integer.into());
    }
    if let Some(string) = &value.string {
        return Some(string.clone().into());
    }
    if let Some(boolean) = value.boolean {
        return Some(boolean.into());
    }
    let raw = value.json_raw.as_ref()?;
    Some(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone())))
}

/// The object's health in the member, from the manifest's `Available` condition: `True` is
/// healthy, `False` unhealthy, anything else (or no condition) unknown.
pub fn health(manifest: &ManifestStatus) -> ResourceHealth {
    match conditions::find(&manifest.conditions, CONDITION_AVAILABLE).map(|c| c.status.as_str()) {
        Some("True") => ResourceHealth::Healthy,
        Some("False") => ResourceHealth::Unhealthy,
        _ => ResourceHealth::Unknown,
    }
}

/// The binding's status entry for `cluster`, from the manifest's status in the cluster's Work
/// (`None` while the agent has not reported it). `applied` is the manifest's `Applied`
/// condition; when it is not `True`, `appliedMessage` says why (the condition's message, else
/// its reason).
pub fn item(cluster: &str, manifest: Option<&ManifestStatus>) -> AggregatedStatusItem {
    let Some(manifest) = manifest else {
        return AggregatedStatusItem {
            cluster_name: cluster.to_owned(),
            status: None,
            applied: false,
            applied_message: Some(NOT_APPLIED_YET.to_owned()),
            health: Some(ResourceHealth::Unknown),
        };
    };
    let condition = conditions::find(&manifest.conditions, CONDITION_APPLIED);
    let applied = condition.is_some_and(|c| c.status == "True");
    let applied_message = (!applied).then(|| match condition {
        Some(c) if !c.message.is_empty() => c.message.clone(),
        Some(c) if !c.reason.is_empty() => c.reason.clone(),
        _ => NOT_APPLIED_YET.to_owned(),
    });
    AggregatedStatusItem {
        cluster_name: cluster.to_owned(),
        status: member_status(manifest),
        applied,
        applied_message,
        health: Some(health(manifest)),
    }
}

#[cfg(test)]
mod tests;
