//! Server-side apply of a Deployment, with the built-in schema (list maps, atomic and granular
//! fields), by two managers in turn: applied or refused (conflict, invalid), never a panic;
//! and a manager applying the configuration it has just applied changes nothing.
//!
//! Input: a JSON object (the applied configuration, over a fixed live Deployment) or an array
//! `[live, applied, other manager's applied]`.
#![no_main]
use std::sync::LazyLock;

use flotilla_api::schema::SchemaSet;
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

static SCHEMAS: LazyLock<flotilla_api::schemas::Schemas> =
    LazyLock::new(flotilla_api::schemas::Schemas::new);

const ROOT: &str = "io.k8s.api.apps.v1.Deployment";
const NOW: &str = "2026-01-01T00:00:00Z";

/// `v` as a Deployment named web: what the handlers have checked before apply runs.
fn deployment(mut v: Value) -> Option<Value> {
    let obj = v.as_object_mut()?;
    obj.insert("apiVersion".into(), json!("apps/v1"));
    obj.insert("kind".into(), json!("Deployment"));
    let meta = obj.entry("metadata").or_insert_with(|| json!({}));
    meta.as_object_mut()?.insert("name".into(), json!("web"));
    Some(v)
}

fn live() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                "containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}
    })
}

fn without_times(mut v: Value) -> Value {
    if let Some(entries) = v
        .pointer_mut("/metadata/managedFields")
        .and_then(Value::as_array_mut)
    {
        for e in entries {
            if let Some(e) = e.as_object_mut() {
                e.remove("time");
            }
        }
    }
    v
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let (live, applied, other) = match input {
        Value::Array(mut items) if items.len() >= 2 => {
            let other = if items.len() >= 3 { deployment(items.remove(2)) } else { None };
            let applied = items.remove(1);
            let Some(live) = deployment(items.remove(0)) else { return };
            (Some(live), applied, other)
        }
        v => (Some(live()), v, None),
    };
    let Some(applied) = deployment(applied) else {
        return;
    };
    let set: &SchemaSet = SCHEMAS.set();
    let apply = |live: Option<&Value>, cfg: &Value, manager: &str, force: bool| {
        flotilla_api::apply::apply(live, cfg, manager, force, set, ROOT, NOW)
    };
    let Ok(first) = apply(live.as_ref(), &applied, "fuzz", false) else {
        return;
    };
    // The same configuration again, by the same manager: no conflict, no change.
    match apply(Some(&first), &applied, "fuzz", false) {
        Ok(again) => assert_eq!(
            without_times(again),
            without_times(first.clone()),
            "applying the same configuration twice changed the object"
        ),
        Err(e) => panic!("applying the same configuration twice failed: {e:?}"),
    }
    if let Some(other) = other {
        let _ = apply(Some(&first), &other, "other", false);
        let _ = apply(Some(&first), &other, "other", true);
    }
});
