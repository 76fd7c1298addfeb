//! Reading a selectable field's value out of a stored object.
//!
//! Kubernetes selects on a flat map each kind's `ToSelectableFields` builds from its internal
//! type. The hub keeps objects as JSON in the version they were written in, so this module
//! rebuilds the same values from JSON: scalars printed as Go prints them, the defaults those
//! functions apply (`spec.hostNetwork` is `false`, `status.successful` is `0`), and, for Events,
//! the same answer whichever API group wrote the object (`involvedObject.*` and `regarding.*`,
//! `reportingComponent` and `reportingController` are one field each).

use flotilla_apis::gvk::group_kind;
use serde_json::Value;

/// The value of `field` (a dotted path such as `status.phase`) in `object`, or `None` when the
/// object does not have it; a field selector compares `None` as the empty string.
///
/// Objects and arrays have no selectable string form and yield `None`.
pub fn extract(object: &Value, field: &str) -> Option<String> {
    let (group, kind) = group_kind(object);
    match (group, kind) {
        ("" | "events.k8s.io", "Event") => event_field(object, field),
        ("", "Pod") => match field {
            "spec.host" => path(object, "spec.nodeName"),
            "spec.hostNetwork" => Some(path(object, field).unwrap_or_else(|| "false".into())),
            "status.podIP" => path(object, "status.podIPs.0.ip").or_else(|| path(object, field)),
            _ => path(object, field),
        },
        ("", "Node") if field == "spec.unschedulable" => {
            Some(path(object, field).unwrap_or_else(|| "false".into()))
        }
        ("", "ReplicationController") if field == "status.replicas" => {
            Some(path(object, field).unwrap_or_else(|| "0".into()))
        }
        ("batch", "Job") if field == "status.successful" => {
            Some(path(object, field).unwrap_or_else(|| "0".into()))
        }
        _ => path(object, field),
    }
}

/// Events: core/v1 and events.k8s.io/v1 name the same fields differently, and Kubernetes
/// answers selectors in either vocabulary for events written through either API.
fn event_field(object: &Value, field: &str) -> Option<String> {
    let either = |a: &str, b: &str| path(object, a).or_else(|| path(object, b));
    if let Some(rest) = field.strip_prefix("involvedObject.") {
        return either(field, &format!("regarding.{rest}"));
    }
    if let Some(rest) = field.strip_prefix("regarding.") {
        return either(field, &format!("involvedObject.{rest}"));
    }
    match field {
        "reportingComponent" | "reportingController" => {
            either("reportingComponent", "reportingController")
        }
        // The component that reported it, falling back to the reporting controller.
        "source" => ["source.component", "deprecatedSource.component"]
            .iter()
            .find_map(|p| path(object, p).filter(|s| !s.is_empty()))
            .or_else(|| either("reportingComponent", "reportingController")),
        _ => path(object, field),
    }
}

/// Follow a dotted path; numeric segments index arrays.
fn path(object: &Value, field: &str) -> Option<String> {
    let mut cur = object;
    for seg in field.split('.') {
        cur = match cur {
            Value::Object(m) => m.get(seg)?,
            Value::Array(a) => a.get(seg.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    scalar(cur)
}

/// A scalar as Go's `strconv`/`fmt` prints it in a field set.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}
