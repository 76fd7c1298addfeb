//! What the propagation controllers read from a template, and the names they give: replica
//! counts by kind, per-replica requests, binding and Work names, and content hashes.

use std::collections::BTreeMap;

use flotilla_apis::quantity;
use serde_json::Value;

pub use flotilla_apis::gvk::{group_kind, group_of, split_api_version};

/// How the hub serves `kind` of `api_version` (its resource, and whether it is namespaced),
/// from discovery.
pub async fn discover(
    hub: &kube::Client,
    api_version: &str,
    kind: &str,
) -> Result<(kube::discovery::ApiResource, bool), kube::Error> {
    let (group, version) = split_api_version(api_version);
    let gvk = kube::core::GroupVersionKind::gvk(group, version, kind);
    let (resource, caps) = kube::discovery::pinned_kind(hub, &gvk).await?;
    Ok((resource, caps.scope == kube::discovery::Scope::Namespaced))
}

/// The API of objects of `resource`: in `namespace` when the kind is namespaced.
pub fn dynamic_api(
    hub: kube::Client,
    resource: &kube::discovery::ApiResource,
    namespaced: bool,
    namespace: Option<&str>,
) -> kube::Api<kube::api::DynamicObject> {
    match (namespace, namespaced) {
        (Some(ns), true) => kube::Api::namespaced_with(hub, ns, resource),
        _ => kube::Api::all_with(hub, resource),
    }
}

/// Whether the scheduler divides this kind's replicas (`Divided`); for other kinds every
/// chosen cluster gets the whole object.
pub fn has_replicas(api_version: &str, kind: &str) -> bool {
    matches!(
        (group_of(api_version), kind),
        ("apps", "Deployment" | "StatefulSet" | "ReplicaSet")
            | ("batch", "Job")
            | ("autoscaling", "HorizontalPodAutoscaler")
    )
}

/// Whether a binding's object has replicas to divide: its kind has compiled rules
/// ([`has_replicas`]), or its ResourceInterpreter read some (the detector wrote them into
/// `spec.replicas`).
pub fn binding_has_replicas(spec: &flotilla_apis::work::v1alpha1::ResourceBindingSpec) -> bool {
    has_replicas(&spec.resource.api_version, &spec.resource.kind) || spec.replicas > 0
}

/// The count the scheduler divides: `spec.replicas` (default 1), a Job's `spec.parallelism`
/// (default 1), an HPA's `spec.maxReplicas`; 0 for other kinds.
pub fn replicas(template: &Value) -> i32 {
    let api_version = template["apiVersion"].as_str().unwrap_or_default();
    let kind = template["kind"].as_str().unwrap_or_default();
    if !has_replicas(api_version, kind) {
        return 0;
    }
    let field = match kind {
        "Job" => "parallelism",
        "HorizontalPodAutoscaler" => "maxReplicas",
        _ => "replicas",
    };
    let n = template["spec"][field].as_i64().unwrap_or(1);
    i32::try_from(n.max(0)).unwrap_or(i32::MAX)
}

/// What the scheduler divides for an object, and what each of its replicas requests
/// (quantities in milli-units).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sizing {
    /// The replica count (0: the kind has none; the whole object goes to every cluster).
    pub replicas: i32,
    /// Per-replica requests.
    pub requests: BTreeMap<String, i64>,
}

impl Sizing {
    /// The compiled rules of the built-in kinds ([`replicas`], [`replica_request`]).
    pub fn compiled(template: &Value) -> Sizing {
        let replicas = replicas(template);
        let requests = if replicas > 0 {
            replica_request(template)
        } else {
            BTreeMap::new()
        };
        Sizing { replicas, requests }
    }

    /// By `interpreter`'s `replicas` rule when it has one (a ResourceInterpreter for the
    /// template's kind), else [`Sizing::compiled`].
    pub fn of(
        template: &Value,
        interpreter: Option<&flotilla_interpreter::Interpreter>,
    ) -> Result<Sizing, flotilla_interpreter::EvalError> {
        let Some(r) = interpreter.and_then(|i| i.replicas(template)) else {
            return Ok(Sizing::compiled(template));
        };
        let r = r?;
        let mut requests = BTreeMap::new();
        for (name, q) in r.requests {
            let millis =
                quantity::parse_millis(&q).ok_or_else(|| flotilla_interpreter::EvalError {
                    rule: "replicas.requests",
                    message: format!("{name}: {q:?} is not a quantity"),
                })?;
            requests.insert(name, millis);
        }
        Ok(Sizing {
            replicas: i32::try_from(r.count).unwrap_or(i32::MAX),
            requests,
        })
    }
}

/// What one replica requests: the sum over the pod template's containers (init containers
/// count with the largest of them, as the kube-scheduler does), as quantities in milli-units
/// rendered back as `<n>m`.
pub fn replica_request(template: &Value) -> BTreeMap<String, i64> {
    let Some(spec) = pod_spec(template) else {
        return BTreeMap::new();
    };
    let requests = |c: &Value| -> BTreeMap<String, i64> {
        c["resources"]["requests"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), quantity::parse_millis(v.as_str()?)?)))
            .collect()
    };
    let mut sum: BTreeMap<String, i64> = BTreeMap::new();
    for c in spec["containers"].as_array().into_iter().flatten() {
        for (k, v) in requests(c) {
            *sum.entry(k).or_default() += v;
        }
    }
    for c in spec["initContainers"].as_array().into_iter().flatten() {
        for (k, v) in requests(c) {
            let e = sum.entry(k).or_default();
            *e = (*e).max(v);
        }
    }
    sum
}

/// `<template name>-<kind in lower case>`, made a valid object name: characters other than
/// lower-case letters, digits, `-` and `.` become `.`, and a name over 253 characters is cut
/// and ends in a hash of the whole.
pub fn binding_name(name: &str, kind: &str) -> String {
    object_name(&format!("{name}-{}", kind.to_lowercase()))
}

/// The Work of a binding in a cluster's execution namespace: `<namespace>.<binding>` for a
/// ResourceBinding, `<binding>` for a ClusterResourceBinding.
pub fn work_name(namespace: Option<&str>, binding: &str) -> String {
    match namespace {
        Some(ns) => object_name(&format!("{ns}.{binding}")),
        None => object_name(binding),
    }
}

/// A label value naming a binding (label values are at most 63 characters): a hash of its
/// namespace and name.
pub fn binding_label(namespace: Option<&str>, name: &str) -> String {
    format!(
        "{:016x}",
        fnv64(format!("{}/{name}", namespace.unwrap_or("")).as_bytes())
    )
}

fn object_name(raw: &str) -> String {
    let mut s: String = raw
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '.'
            }
        })
        .collect();
    if s.len() > 253 {
        s.truncate(236);
        s.push_str(&format!("-{:016x}", fnv64(raw.as_bytes())));
    }
    let trimmed = s.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    trimmed.to_owned()
}

/// FNV-1a, 64 bits: a stable content hash (the same on every build and machine).
pub fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A hash of what a template says, without what the hub writes (status, resourceVersion,
/// managedFields, generation): it changes when the template is edited, not when its status is
/// aggregated.
pub fn template_hash(template: &Value) -> String {
    let mut t = template.clone();
    if let Some(o) = t.as_object_mut() {
        o.remove("status");
    }
    if let Some(m) = t.get_mut("metadata").and_then(Value::as_object_mut) {
        for k in ["resourceVersion", "managedFields", "generation"] {
            m.remove(k);
        }
    }
    format!("{:016x}", fnv64(t.to_string().as_bytes()))
}

/// The pod spec inside `template`: `spec` of a Pod; `spec.template.spec` of a Deployment,
/// StatefulSet, DaemonSet, ReplicaSet, ReplicationController or Job;
/// `spec.jobTemplate.spec.template.spec` of a CronJob. `None` for other kinds, or when the
/// template has no pod spec there.
pub fn pod_spec(template: &Value) -> Option<&Value> {
    let pointer = match group_kind(template) {
        ("", "Pod") => "/spec",
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
        | ("", "ReplicationController")
        | ("batch", "Job") => "/spec/template/spec",
        ("batch", "CronJob") => "/spec/jobTemplate/spec/template/spec",
        _ => return None,
    };
    template.pointer(pointer).filter(|spec| spec.is_object())
}

#[cfg(test)]
mod tests;
