//! Where a resource's objects are stored, and in which shape.
//!
//! Most resources own their storage prefix and keep objects as written. A few are, as in
//! Kubernetes, two APIs over one store: `events.k8s.io/v1` Events are the core/v1 Events (one
//! etcd prefix, `/registry/events`, in kube-apiserver), so an Event written through either API
//! is listed, watched and gettable through both. Such objects are stored in the owning API's
//! shape and converted when read or written through the other, field by field as Kubernetes'
//! conversion functions do (`pkg/apis/events/v1/conversion.go`). autoscaling/v1
//! HorizontalPodAutoscalers are the autoscaling/v2 ones, converted by [`hpa`].

mod hpa;

use serde_json::{Map, Value};

use super::ResourceInfo;

/// `(served group, plural)` → the group whose storage holds it (same plural).
const SHARED: &[(&str, &str, &str)] = &[("events.k8s.io", "events", "")];

/// The group whose storage prefix holds `group`/`plural` (itself unless shared).
pub fn storage_group<'a>(group: &'a str, plural: &str) -> &'a str {
    SHARED
        .iter()
        .find(|(g, p, _)| *g == group && *p == plural)
        .map_or(group, |(_, _, owner)| owner)
}

/// Is this resource stored in another API's shape?
pub fn converts(res: &ResourceInfo) -> bool {
    !res.custom && (storage_group(&res.group, &res.plural) != res.group || is_hpa_v1(res))
}

/// autoscaling/v1 HorizontalPodAutoscalers, stored as autoscaling/v2 ones.
fn is_hpa_v1(res: &ResourceInfo) -> bool {
    res.group == "autoscaling" && res.plural == "horizontalpodautoscalers" && res.version == "v1"
}

/// events.k8s.io/v1 field ↔ core/v1 field. Every other field (metadata, eventTime, series,
/// action, reason, type, related, reportingInstance) has one name in both.
const EVENT_FIELDS: &[(&str, &str)] = &[
    ("note", "message"),
    ("regarding", "involvedObject"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
    ("reportingController", "reportingComponent"),
];

/// The object as `res` serves it, from the stored one. Safe to call on an object already in
/// the served shape.
pub fn from_storage(res: &ResourceInfo, stored: Value) -> Value {
    if !converts(res) {
        return stored;
    }
    match (res.group.as_str(), res.plural.as_str()) {
        ("events.k8s.io", "events") => rename(stored, &res.api_version(), |core| {
            EVENT_FIELDS
                .iter()
                .find(|(_, c)| *c == core)
                .map(|(served, _)| *served)
        }),
        ("autoscaling", "horizontalpodautoscalers") => hpa::to_v1(stored),
        _ => stored,
    }
}

/// The object as it is stored, from the one `res` serves. Safe to call on an object already
/// in the stored shape.
pub fn to_storage(res: &ResourceInfo, served: Value) -> Value {
    if !converts(res) {
        return served;
    }
    match (res.group.as_str(), res.plural.as_str()) {
        ("events.k8s.io", "events") => rename(served, "v1", |ev| {
            EVENT_FIELDS
                .iter()
                .find(|(e, _)| *e == ev)
                .map(|(_, core)| *core)
        }),
        ("autoscaling", "horizontalpodautoscalers") => hpa::from_v1(served),
        _ => served,
    }
}

/// Rename top-level fields by `map` and set `apiVersion`, keeping the fields' order.
fn rename(obj: Value, api_version: &str, map: impl Fn(&str) -> Option<&'static str>) -> Value {
    let Value::Object(fields) = obj else {
        return obj;
    };
    let mut out = Map::with_capacity(fields.len());
    for (k, v) in fields {
        match k.as_str() {
            "apiVersion" => {
                out.insert(k, Value::String(api_version.to_string()));
            }
            other => match map(other) {
                Some(to) => {
                    out.insert(to.to_string(), v);
                }
                None => {
                    out.insert(k, v);
                }
            },
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests;
