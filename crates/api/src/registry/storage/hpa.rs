//! autoscaling/v1 HorizontalPodAutoscalers over the autoscaling/v2 ones the hub stores, as
//! kube-apiserver converts them (`pkg/apis/autoscaling/v1/conversion.go`).
//!
//! v1 has one CPU target (`targetCPUUtilizationPercentage`) and one CPU reading
//! (`currentCPUUtilizationPercentage`); whatever else a v2 object holds — other metrics, their
//! readings, conditions, behavior — travels in four `autoscaling.alpha.kubernetes.io/*`
//! annotations of the v1 object, in v1's (v2beta1-like) metric format, so a v1 client that
//! writes an object back loses nothing. The annotations never reach storage.

mod behavior;
mod metrics;

use serde_json::{json, Map, Value};

use behavior::{behavior_from_go, behavior_to_go};
use metrics::{spec_from_v1, spec_to_v1, status_from_v1, status_to_v1};

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const ROUND_TRIP: [&str; 4] = [METRICS, BEHAVIOR, CURRENT_METRICS, CONDITIONS];

/// The v1 object of a stored (v2) one; a v1 object is returned as it is.
pub(super) fn to_v1(stored: Value) -> Value {
    if stored["apiVersion"] == "autoscaling/v1" || !stored.is_object() {
        return stored;
    }
    let spec = &stored["spec"];
    let status = &stored["status"];
    let metrics = items(spec, "metrics");
    let mut annotations = kept_annotations(&stored);
    let others: Vec<Value> = metrics
        .iter()
        .filter(|m| cpu_utilization(m).is_none())
        .map(spec_to_v1)
        .collect();
    if !others.is_empty() {
        annotations.insert(METRICS.into(), json!(Value::Array(others).to_string()));
    }
    let current = items(status, "currentMetrics");
    if !current.is_empty() {
        let v1: Vec<Value> = current.iter().map(status_to_v1).collect();
        annotations.insert(CURRENT_METRICS.into(), json!(Value::Array(v1).to_string()));
    }
    if spec.get("behavior").is_some_and(Value::is_object) {
        let go = behavior_to_go(&spec["behavior"]);
        annotations.insert(BEHAVIOR.into(), json!(go.to_string()));
    }
    let conditions = items(status, "conditions");
    if !conditions.is_empty() {
        annotations.insert(
            CONDITIONS.into(),
            json!(Value::Array(conditions.to_vec()).to_string()),
        );
    }

    let mut v1_spec = pick(spec, &["scaleTargetRef", "minReplicas", "maxReplicas"]);
    if let Some(cpu) = metrics.iter().find_map(cpu_utilization) {
        v1_spec.insert("targetCPUUtilizationPercentage".into(), cpu);
    }
    let mut v1_status = pick(status, &["observedGeneration", "lastScaleTime"]);
    for field in ["currentReplicas", "desiredReplicas"] {
        v1_status.insert(field.into(), status.get(field).cloned().unwrap_or(json!(0)));
    }
    let cpu_now = current.iter().rev().find_map(|m| {
        (m["type"] == "Resource" && m["resource"]["name"] == "cpu")
            .then(|| m["resource"]["current"].get("averageUtilization").cloned())
            .flatten()
    });
    if let Some(cpu) = cpu_now {
        v1_status.insert("currentCPUUtilizationPercentage".into(), cpu);
    }
    rebuild(stored, "autoscaling/v1", annotations, v1_spec, v1_status)
}

/// The stored (v2) object of a v1 one; a v2 object is returned as it is.
pub(super) fn from_v1(served: Value) -> Value {
    if served["apiVersion"] == "autoscaling/v2" || !served.is_object() {
        return served;
    }
    let spec = &served["spec"];
    let status = &served["status"];
    let annotation = |key: &str| -> Option<Value> {
        let text = served["metadata"]["annotations"].get(key)?.as_str()?;
        serde_json::from_str(text).ok()
    };
    let mut metrics: Vec<Value> = annotation(METRICS)
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(spec_from_v1)
        .collect();
    // kube's v1 default: a CPU target of 80% when nothing else is asked for.
    let cpu = spec
        .get("targetCPUUtilizationPercentage")
        .filter(|v| !v.is_null());
    if cpu.is_some() || metrics.is_empty() {
        let target = cpu.cloned().unwrap_or(json!(80));
        metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": target}}}));
    }
    let mut v2_spec = pick(spec, &["scaleTargetRef", "minReplicas", "maxReplicas"]);
    v2_spec.insert("metrics".into(), Value::Array(metrics));
    if let Some(behavior) = annotation(BEHAVIOR).map(|b| behavior_from_go(&b)) {
        if behavior.as_object().is_some_and(|b| !b.is_empty()) {
            v2_spec.insert("behavior".into(), behavior);
        }
    }
    let mut v2_status = pick(
        status,
        &[
            "observedGeneration",
            "lastScaleTime",
            "currentReplicas",
            "desiredReplicas",
        ],
    );
    let current = match annotation(CURRENT_METRICS).and_then(|v| v.as_array().cloned()) {
        Some(list) => list.iter().map(status_from_v1).collect(),
        None => status
            .get("currentCPUUtilizationPercentage")
            .filter(|v| !v.is_null())
            .map(|cpu| {
                vec![json!({"type": "Resource", "resource": {"name": "cpu",
                    "current": {"averageUtilization": cpu}}})]
            })
            .unwrap_or_default(),
    };
    if !current.is_empty() {
        v2_status.insert("currentMetrics".into(), Value::Array(current));
    }
    if let Some(conditions) = annotation(CONDITIONS).filter(Value::is_array) {
        v2_status.insert("conditions".into(), conditions);
    }
    let annotations = kept_annotations(&served);
    rebuild(served, "autoscaling/v2", annotations, v2_spec, v2_status)
}

/// `obj` with `apiVersion`, annotations, spec and status replaced, other fields in place.
fn rebuild(
    obj: Value,
    api_version: &str,
    annotations: Map<String, Value>,
    spec: Map<String, Value>,
    status: Map<String, Value>,
) -> Value {
    let had_status = obj.get("status").is_some();
    let Value::Object(fields) = obj else {
        return obj;
    };
    let mut out = Map::with_capacity(fields.len() + 1);
    for (k, v) in fields {
        let v = match k.as_str() {
            "apiVersion" => json!(api_version),
            "spec" => Value::Object(spec.clone()),
            "status" => Value::Object(status.clone()),
            "metadata" => with_annotations(v, &annotations),
            _ => v,
        };
        out.insert(k, v);
    }
    out.entry("spec").or_insert_with(|| Value::Object(spec));
    // v1's status is a struct: always there, as in kube's answers.
    if !had_status && api_version == "autoscaling/v1" {
        out.insert("status".into(), Value::Object(status));
    }
    Value::Object(out)
}

fn with_annotations(mut metadata: Value, annotations: &Map<String, Value>) -> Value {
    if let Some(m) = metadata.as_object_mut() {
        if annotations.is_empty() {
            m.remove("annotations");
        } else {
            m.insert("annotations".into(), Value::Object(annotations.clone()));
        }
    }
    metadata
}

/// The object's annotations without the four round-trip ones.
fn kept_annotations(obj: &Value) -> Map<String, Value> {
    let mut out = obj["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for key in ROUND_TRIP {
        out.remove(key);
    }
    out
}

fn items<'a>(obj: &'a Value, field: &str) -> &'a [Value] {
    obj.get(field)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The fields of `obj` named in `fields` that are set, in that order.
fn pick(obj: &Value, fields: &[&str]) -> Map<String, Value> {
    fields
        .iter()
        .filter_map(|f| {
            let v = obj.get(*f).filter(|v| !v.is_null())?;
            Some((f.to_string(), v.clone()))
        })
        .collect()
}

/// A v2 metric's CPU utilization target, which v1 holds in `targetCPUUtilizationPercentage`.
fn cpu_utilization(m: &Value) -> Option<Value> {
    if m["type"] != "Resource" || m["resource"]["name"] != "cpu" {
        return None;
    }
    m["resource"]["target"]
        .get("averageUtilization")
        .filter(|v| !v.is_null())
        .cloned()
}

#[cfg(test)]
mod tests;
