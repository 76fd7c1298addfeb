//! Content rules of flotilla's own kinds beyond their schema: what a propagation may reach
//! ([`flotilla_apis::scope`]), refused at admission so the user learns at once (the
//! controllers check the same at their end).
//!
//! * `ResourceBinding`: `spec.resource` is an object of the binding's own namespace, and
//!   nothing of the hub's own (its namespaces, flotilla's API groups); a
//!   `ClusterResourceBinding`: nothing of the hub's own.
//! * `OverridePolicy`, `ClusterOverridePolicy`: no `plaintext` path or image predicate writes
//!   an identity field (apiVersion, kind, metadata.name/namespace/generateName).
//! * `Cluster`: `spec.secretRef` names a Secret in flotilla-system; a new cluster's name is
//!   none the controllers' own Leases use (its heartbeat Lease in flotilla-system is named
//!   after it).
//!
//! * `ResourceInterpreter`: every CEL rule compiles and every field path is a dotted path
//!   ([`flotilla_interpreter::Interpreter::compile`]), so a bad rule is refused at create with
//!   the CEL error, never met at run time.
//!
//! On an update, a rule looks only at a part the update changes, so objects stored before a
//! rule existed can still get their status, finalizers and deletion.

use flotilla_apis::names::SYSTEM_NAMESPACE;
use flotilla_apis::scope::{binding_reference, hub_internal, touches_identity, IDENTITY_REASON};
use serde_json::Value;

use super::Causes;
use crate::registry::ResourceInfo;

/// The causes for refusing `obj` (updated from `old`, when an update).
pub(super) fn causes(res: &ResourceInfo, old: Option<&Value>, obj: &Value) -> Causes {
    if old.is_none() && res.group == "cluster.flotilla.io" && res.kind == "Cluster" {
        let name = text(obj, "/metadata/name").unwrap_or_default();
        if let Some(prefix) = RESERVED_LEASES.iter().find(|p| name.starts_with(**p)) {
            return vec![(
                "metadata.name".to_owned(),
                format!(
                    "Invalid value: {name:?}: names starting with {prefix:?} are the \
                     controllers' shard and membership Leases in {SYSTEM_NAMESPACE}, where \
                     each cluster's heartbeat Lease is named after it: choose another name"
                ),
            )];
        }
    }
    let (part, rule): (&str, fn(&Value) -> Causes) = match (res.group.as_str(), res.kind.as_str()) {
        ("work.flotilla.io", "ResourceBinding") => ("/spec/resource", resource_binding),
        ("work.flotilla.io", "ClusterResourceBinding") => ("/spec/resource", hub_own),
        ("policy.flotilla.io", "OverridePolicy" | "ClusterOverridePolicy") => {
            ("/spec/overrideRules", override_rules)
        }
        ("cluster.flotilla.io", "Cluster") => ("/spec/secretRef", cluster),
        ("config.flotilla.io", "ResourceInterpreter") => ("/spec", resource_interpreter),
        ("policy.flotilla.io", "PropagationPolicy" | "ClusterPropagationPolicy") => {
            ("/spec/rolloutStrategy", rollout_strategy)
        }
        _ => return Vec::new(),
    };
    if old.is_some_and(|old| old.pointer(part) == obj.pointer(part)) {
        return Vec::new();
    }
    rule(obj)
}

/// A rollout strategy's durations are Go durations, its counts numbers or percentages, its
/// groups named, each name once.
fn rollout_strategy(obj: &Value) -> Causes {
    let Some(r) = obj.pointer("/spec/rolloutStrategy") else {
        return Vec::new();
    };
    let mut causes = Causes::new();
    for field in ["minSuccessTime", "progressDeadline"] {
        if let Some(v) = r.get(field) {
            let ok = v
                .as_str()
                .is_some_and(|t| flotilla_apis::duration::parse(t).is_some());
            if !ok {
                causes.push((
                    format!("spec.rolloutStrategy.{field}"),
                    format!("Invalid value: {v}: a duration such as 30s or 5m"),
                ));
            }
        }
    }
    for field in ["maxConcurrency", "maxFailures"] {
        let Some(v) = r.get(field) else { continue };
        let ok = match v {
            Value::Number(n) => n.as_u64().is_some(),
            Value::String(s) => match s.strip_suffix('%') {
                Some(p) => p.parse::<u32>().is_ok_and(|p| p <= 100),
                None => s.parse::<u32>().is_ok(),
            },
            _ => false,
        };
        if !ok {
            causes.push((
                format!("spec.rolloutStrategy.{field}"),
                format!("Invalid value: {v}: a number of clusters or a percentage such as \"25%\""),
            ));
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (i, g) in r["groups"].as_array().into_iter().flatten().enumerate() {
        let name = g["name"].as_str().unwrap_or_default();
        if name.is_empty() || name == "*" {
            causes.push((
                format!("spec.rolloutStrategy.groups[{i}].name"),
                "Required value: a name for the group (not \"*\", which stands for the clusters in no group)".to_owned(),
            ));
        } else if !seen.insert(name) {
            causes.push((
                format!("spec.rolloutStrategy.groups[{i}].name"),
                format!("Duplicate value: {name:?}"),
            ));
        }
    }
    causes
}

/// Every rule of a ResourceInterpreter compiles.
fn resource_interpreter(obj: &Value) -> Causes {
    let spec = obj.get("spec").cloned().unwrap_or_default();
    // The schema has checked the shape already; a spec that still does not read is named.
    let spec: flotilla_apis::config::v1alpha1::ResourceInterpreterSpec =
        match serde_json::from_value(spec) {
            Ok(s) => s,
            Err(e) => return vec![("spec".to_owned(), format!("Invalid value: {e}"))],
        };
    match flotilla_interpreter::Interpreter::compile(&spec) {
        Ok(_) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| (e.field, e.message)).collect(),
    }
}

/// Lease names of `flotilla controllers` processes in flotilla-system.
const RESERVED_LEASES: [&str; 2] = ["flotilla-shard-", "flotilla-controller-"];

fn text<'a>(obj: &'a Value, pointer: &str) -> Option<&'a str> {
    obj.pointer(pointer).and_then(Value::as_str)
}

/// Nothing of the hub's own is propagated, by any binding.
fn hub_own(obj: &Value) -> Causes {
    let api_version = text(obj, "/spec/resource/apiVersion").unwrap_or_default();
    let namespace = text(obj, "/spec/resource/namespace");
    hub_internal(api_version, namespace)
        .map(|why| vec![("spec.resource".to_owned(), format!("Forbidden: {why}"))])
        .unwrap_or_default()
}

/// A ResourceBinding propagates only objects of its own namespace.
fn resource_binding(obj: &Value) -> Causes {
    let own = text(obj, "/metadata/namespace").unwrap_or_default();
    let theirs = text(obj, "/spec/resource/namespace");
    let mut causes = hub_own(obj);
    if let Some(why) = binding_reference(own, theirs) {
        let message = match theirs.filter(|ns| !ns.is_empty()) {
            Some(ns) => format!("Invalid value: {ns:?}: {why}"),
            None => format!("Required value: {why}"),
        };
        causes.push(("spec.resource.namespace".to_owned(), message));
    }
    causes
}

/// No overrider writes an identity field.
fn override_rules(obj: &Value) -> Causes {
    let mut causes = Vec::new();
    let rules = obj.pointer("/spec/overrideRules").and_then(Value::as_array);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        let at = format!("spec.overrideRules[{i}].overriders");
        let list = |name: &str| {
            rule.pointer(&format!("/overriders/{name}"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let paths = list("plaintext")
            .iter()
            .enumerate()
            .filter_map(|(j, o)| {
                Some((
                    format!("{at}.plaintext[{j}].path"),
                    text(o, "/path")?.to_owned(),
                ))
            })
            .chain(
                list("imageOverrider")
                    .iter()
                    .enumerate()
                    .filter_map(|(j, o)| {
                        let path = text(o, "/predicate/path")?.to_owned();
                        Some((format!("{at}.imageOverrider[{j}].predicate.path"), path))
                    }),
            )
            .collect::<Vec<_>>();
        for (field, path) in paths {
            if touches_identity(&path) {
                causes.push((field, format!("Invalid value: {path:?}: {IDENTITY_REASON}")));
            }
        }
    }
    causes
}

/// A push member's credential Secret is in flotilla-system.
fn cluster(obj: &Value) -> Causes {
    match text(obj, "/spec/secretRef/namespace") {
        Some(ns) if ns != SYSTEM_NAMESPACE => vec![(
            "spec.secretRef.namespace".to_owned(),
            format!("Unsupported value: {ns:?}: supported values: {SYSTEM_NAMESPACE:?}"),
        )],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
