//! `meta.k8s.io/v1` Table responses: what `kubectl get` prints.

use std::sync::Arc;

use serde_json::{json, Value};

use super::json_path::json_path;
use super::Ctx;
use crate::cache::CachedObject;
use crate::registry::{PrinterColumn, ResourceInfo};

mod cells;

fn column_defs(res: &ResourceInfo) -> Vec<Value> {
    let mut defs = vec![
        json!({"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace.", "priority": 0}),
    ];
    for c in &res.columns {
        defs.push(json!({"name": c.name, "type": c.type_, "format": c.format, "description": c.description, "priority": c.priority}));
    }
    defs
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn join(vals: impl IntoIterator<Item = String>) -> String {
    let v: Vec<String> = vals.into_iter().filter(|s| !s.is_empty()).collect();
    if v.is_empty() {
        "<none>".into()
    } else {
        v.join(",")
    }
}

/// A label map as kubectl prints a selector: `k=v` pairs, or `<none>`.
fn selector(labels: Option<&Value>) -> String {
    match labels.and_then(Value::as_object) {
        Some(m) => join(m.iter().map(|(k, v)| format!("{k}={}", scalar(v)))),
        None => "<none>".into(),
    }
}

fn age_since(ts: &str) -> String {
    let Ok(t) = chrono::DateTime::parse_from_rfc3339(ts) else {
        return "<unknown>".into();
    };
    let secs = (chrono::Utc::now() - t.with_timezone(&chrono::Utc))
        .num_seconds()
        .max(0);
    match secs {
        s if s < 120 => format!("{s}s"),
        s if s < 600 => format!("{}m{}s", s / 60, s % 60),
        s if s < 3 * 3600 => format!("{}m", s / 60),
        s if s < 8 * 3600 => format!("{}h{}m", s / 3600, (s % 3600) / 60),
        s if s < 48 * 3600 => format!("{}h", s / 3600),
        s => format!("{}d", s / 86400),
    }
}

fn computed(name: &str, o: &Value) -> Value {
    let s = |p: &str| o.pointer(p).cloned().unwrap_or(Value::Null);
    let i = |p: &str| o.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    let containers = || {
        o.pointer("/spec/template/spec/containers")
            .or_else(|| o.pointer("/spec/jobTemplate/spec/template/spec/containers"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    json!(match name {
        "@ready" => format!(
            "{}/{}",
            i("/status/readyReplicas"),
            o.pointer("/spec/replicas")
                .and_then(Value::as_i64)
                .unwrap_or(1)
        ),
        "@data" =>
            return json!(
                o.get("data")
                    .and_then(Value::as_object)
                    .map(|m| m.len())
                    .unwrap_or(0)
                    + o.get("binaryData")
                        .and_then(Value::as_object)
                        .map(|m| m.len())
                        .unwrap_or(0)
            ),
        "@containers" => join(containers().iter().map(|c| scalar(&c["name"]))),
        "@images" => join(containers().iter().map(|c| scalar(&c["image"]))),
        "@selector" => selector(o.pointer("/spec/selector/matchLabels")),
        "@svcselector" => selector(o.pointer("/spec/selector")),
        "@clusterip" => {
            let c = scalar(&s("/spec/clusterIP"));
            if c.is_empty() {
                "<none>".into()
            } else {
                c
            }
        }
        // A Service's External-IP and an Ingress's Address are both its load balancer's
        // ingress points, each an IP or else a hostname.
        "@externalip" | "@lbaddress" => join(
            o.pointer("/status/loadBalancer/ingress")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|i| if i["ip"].is_string() {
                    scalar(&i["ip"])
                } else {
                    scalar(&i["hostname"])
                })
        ),
        "@ports" => join(
            o.pointer("/spec/ports")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|p| {
                    let proto = p["protocol"].as_str().unwrap_or("TCP");
                    match p.get("nodePort") {
                        Some(n) => format!("{}:{}/{proto}", scalar(&p["port"]), scalar(n)),
                        None => format!("{}/{proto}", scalar(&p["port"])),
                    }
                })
        ),
        "@lastseen" => age_since(
            o.get("lastTimestamp")
                .and_then(Value::as_str)
                .or_else(|| o.get("eventTime").and_then(Value::as_str))
                .or_else(|| o
                    .pointer("/metadata/creationTimestamp")
                    .and_then(Value::as_str))
                .unwrap_or("")
        ),
        "@involved" => format!(
            "{}/{}",
            scalar(&s("/involvedObject/kind")).to_lowercase(),
            scalar(&s("/involvedObject/name"))
        ),
        "@endpoints" => join(
            o.get("subsets")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .iter()
                .flat_map(|ss| {
                    let ports: Vec<String> = ss["ports"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                        .iter()
                        .map(|p| scalar(&p["port"]))
                        .collect();
                    ss["addresses"]
                        .as_array()
                        .cloned()
                        .unwrap_or_default()
                        .iter()
                        .flat_map(|a| {
                            let ip = scalar(&a["ip"]);
                            if ports.is_empty() {
                                vec![ip]
                            } else {
                                ports.iter().map(|p| format!("{ip}:{p}")).collect()
                            }
                        })
                        .collect::<Vec<_>>()
                })
        ),
        "@accessmodes" => join(
            o.pointer("/spec/accessModes")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(scalar)
        ),
        "@jobstatus" => {
            let conds = o
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let has = |t: &str| {
                conds
                    .iter()
                    .any(|c| c["type"] == t && c["status"] == "True")
            };
            if has("Complete") {
                "Complete"
            } else if has("Failed") {
                "Failed"
            } else if has("Suspended") {
                "Suspended"
            } else {
                "Running"
            }
            .to_string()
        }
        "@completions" => format!(
            "{}/{}",
            i("/status/succeeded"),
            o.pointer("/spec/completions")
                .and_then(Value::as_i64)
                .unwrap_or(1)
        ),
        "@duration" => match (
            o.pointer("/status/startTime").and_then(Value::as_str),
            o.pointer("/status/completionTime").and_then(Value::as_str)
        ) {
            (Some(st), Some(_)) | (Some(st), None) => age_since(st),
            _ => String::new(),
        },
        "@active" =>
            return json!(o
                .pointer("/status/active")
                .and_then(Value::as_array)
                .map(|a| a.len())
                .unwrap_or(0)),
        "@scaletarget" => format!(
            "{}/{}",
            scalar(&s("/spec/scaleTargetRef/kind")),
            scalar(&s("/spec/scaleTargetRef/name"))
        ),
        "@hosts" => join(
            o.pointer("/spec/rules")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
                .iter()
                .map(|r| {
                    let h = scalar(&r["host"]);
                    if h.is_empty() {
                        "*".into()
                    } else {
                        h
                    }
                })
        ),
        "@podselector" => match o
            .pointer("/spec/podSelector/matchLabels")
            .and_then(Value::as_object)
        {
            Some(m) if !m.is_empty() => join(m.iter().map(|(k, v)| format!("{k}={}", scalar(v)))),
            _ => "<none>".into(),
        },
        "@roleref" => format!(
            "{}/{}",
            scalar(&s("/roleRef/kind")),
            scalar(&s("/roleRef/name"))
        ),
        "@apiservice" | "@apiavailable" => return crate::aggregator::cell(name, o),
        _ => return cells::computed(name, o).unwrap_or_else(|| json!("")),
    })
}

fn cell(c: &PrinterColumn, o: &Value) -> Value {
    if c.json_path.starts_with('@') {
        return computed(&c.json_path, o);
    }
    let vals = json_path(o, &c.json_path);
    let Some(first) = vals.first() else {
        return Value::Null;
    };
    if c.type_ == "date" {
        if let Some(ts) = first.as_str() {
            return json!(age_since(ts));
        }
    }
    if vals.len() > 1 {
        return json!(vals.iter().map(scalar).collect::<Vec<_>>().join(","));
    }
    first.clone()
}

fn row(res: &ResourceInfo, o: &Value, include: Option<&str>) -> Value {
    let mut cells = vec![cells::name(res, o)];
    cells.extend(res.columns.iter().map(|c| cell(c, o)));
    let object = match include {
        Some("None") => Value::Null,
        Some("Object") => super::objects::encode::output_value(res, o.clone()),
        _ => {
            json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o.get("metadata").cloned().unwrap_or(json!({}))})
        }
    };
    json!({"cells": cells, "object": object})
}

/// A Table of `items`; `list` is the list's `metadata` (ListMeta) for list responses.
pub(super) fn table(
    res: &ResourceInfo,
    items: &[Arc<CachedObject>],
    ctx: &Ctx,
    list: Option<Value>,
) -> Value {
    let include = ctx.query.include_object.as_deref();
    let rows: Vec<Value> = items
        .iter()
        .map(|o| row(res, &o.value(), include))
        .collect();
    let meta = list.unwrap_or_else(|| json!({}));
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta, "columnDefinitions": column_defs(res), "rows": rows})
}

/// The Table for one watch event (kubectl get -w).
pub(super) fn table_for_watch(
    res: &ResourceInfo,
    o: &CachedObject,
    include: Option<&str>,
) -> Value {
    let v = o.value();
    json!({
        "kind": "Table", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": o.mod_revision.to_string()},
        "columnDefinitions": column_defs(res),
        "rows": [row(res, &v, include)],
    })
}

#[cfg(test)]
mod tests;
