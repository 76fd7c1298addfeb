//! What a CustomResourceDefinition adds to the registry: one [`ResourceInfo`] per served version.

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::Value;

use super::{PrinterColumn, ResourceInfo, ScaleSpec};
use crate::admission::schema::on_read::ReadDefaults;

const CR_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

fn strs(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Kubernetes version priority: GA before beta before alpha, higher numbers first, then others
/// alphabetically (`v2 > v1 > v1beta2 > v1beta1 > v1alpha1 > foo`).
pub fn version_priority(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u32, u8, u32)> {
        let rest = v.strip_prefix('v')?;
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        let major: u32 = digits.parse().ok()?;
        let tail = &rest[digits.len()..];
        if tail.is_empty() {
            return Some((major, 2, 0));
        }
        let (level, n) = if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (0, n)
        } else {
            return None;
        };
        Some((major, level, n.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        (Some((ma, la, na)), Some((mb, lb, nb))) => lb.cmp(&la).then(mb.cmp(&ma)).then(nb.cmp(&na)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// Is the CRD accepted and serving (its `Established` condition is True)?
pub fn is_established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
        .unwrap_or(false)
}

/// The resources a CRD serves, preferred version first.
pub fn resources_for(crd: &Value) -> Vec<ResourceInfo> {
    let spec = &crd["spec"];
    let names = &spec["names"];
    let group = spec["group"].as_str().unwrap_or_default().to_string();
    let kind = names["kind"].as_str().unwrap_or_default().to_string();
    let plural = names["plural"].as_str().unwrap_or_default().to_string();
    let singular = names["singular"]
        .as_str()
        .map(String::from)
        .unwrap_or_else(|| kind.to_ascii_lowercase());
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let mut versions: Vec<&Value> = spec["versions"]
        .as_array()
        .map(|v| {
            v.iter()
                .filter(|v| v["served"].as_bool().unwrap_or(false))
                .collect()
        })
        .unwrap_or_default();
    versions.sort_by(|a, b| {
        version_priority(
            a["name"].as_str().unwrap_or(""),
            b["name"].as_str().unwrap_or(""),
        )
    });
    versions
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let version = v["name"].as_str().unwrap_or_default().to_string();
            let sub = &v["subresources"];
            let scale = sub
                .get("scale")
                .filter(|s| s.is_object())
                .map(|s| ScaleSpec {
                    spec_replicas_path: s["specReplicasPath"]
                        .as_str()
                        .unwrap_or(".spec.replicas")
                        .into(),
                    status_replicas_path: s["statusReplicasPath"]
                        .as_str()
                        .unwrap_or(".status.replicas")
                        .into(),
                    label_selector_path: s["labelSelectorPath"].as_str().map(String::from),
                });
            let mut columns: Vec<PrinterColumn> = v["additionalPrinterColumns"]
                .as_array()
                .map(|cols| {
                    cols.iter()
                        .map(|c| PrinterColumn {
                            name: c["name"].as_str().unwrap_or_default().into(),
                            type_: c["type"].as_str().unwrap_or("string").into(),
                            format: c["format"].as_str().unwrap_or_default().into(),
                            description: c["description"].as_str().unwrap_or_default().into(),
                            priority: c["priority"].as_i64().unwrap_or(0) as i32,
                            json_path: c["jsonPath"].as_str().unwrap_or_default().into(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            if columns.is_empty() {
                columns.push(PrinterColumn {
                    name: "Age".into(),
                    type_: "date".into(),
                    format: String::new(),
                    description: String::new(),
                    priority: 0,
                    json_path: ".metadata.creationTimestamp".into(),
                });
            }
            ResourceInfo {
                group: group.clone(),
                version,
                kind: kind.clone(),
                plural: plural.clone(),
                singular: singular.clone(),
                namespaced,
                short_names: strs(&names["shortNames"]),
                categories: strs(&names["categories"]),
                status: sub.get("status").is_some_and(|s| s.is_object()),
                scale,
                verbs: CR_VERBS.to_vec(),
                columns,
                custom: true,
                schema_root: None,
                storage_version: i == 0,
                read_defaults: v
                    .pointer("/schema/openAPIV3Schema")
                    .and_then(ReadDefaults::compile)
                    .map(Arc::new),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests;
