//! `SetDefaults_*` of flowcontrol.apiserver.k8s.io/v1, as every write of a FlowSchema or
//! PriorityLevelConfiguration gets them (called from [`crate::admission::defaults`]).

use serde_json::{json, Map, Value};

/// A FlowSchema's `matchingPrecedence` when it gives none (or 0).
pub const DEFAULT_MATCHING_PRECEDENCE: i64 = 1000;

/// Default `obj`, a FlowSchema or PriorityLevelConfiguration.
pub fn apply(kind: &str, obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    match kind {
        "FlowSchema" => zero_default(spec, "matchingPrecedence", DEFAULT_MATCHING_PRECEDENCE),
        "PriorityLevelConfiguration" => priority_level(spec),
        _ => {}
    }
}

fn priority_level(spec: &mut Map<String, Value>) {
    if let Some(exempt) = spec.get_mut("exempt").and_then(Value::as_object_mut) {
        nil_default(exempt, "nominalConcurrencyShares", 0);
        nil_default(exempt, "lendablePercent", 0);
    }
    let Some(limited) = spec.get_mut("limited").and_then(Value::as_object_mut) else {
        return;
    };
    nil_default(limited, "nominalConcurrencyShares", 30);
    nil_default(limited, "lendablePercent", 0);
    let queuing = limited
        .get_mut("limitResponse")
        .and_then(|r| r.get_mut("queuing"))
        .and_then(Value::as_object_mut);
    if let Some(q) = queuing {
        zero_default(q, "handSize", 8);
        zero_default(q, "queues", 64);
        zero_default(q, "queueLengthLimit", 50);
    }
}

/// A pointer field: set when absent or null.
fn nil_default(m: &mut Map<String, Value>, key: &str, v: i64) {
    if m.get(key).is_none_or(Value::is_null) {
        m.insert(key.to_string(), json!(v));
    }
}

/// An integer field: set when absent, null or 0.
fn zero_default(m: &mut Map<String, Value>, key: &str, v: i64) {
    if m.get(key)
        .is_none_or(|x| x.is_null() || x.as_i64() == Some(0))
    {
        m.insert(key.to_string(), json!(v));
    }
}
