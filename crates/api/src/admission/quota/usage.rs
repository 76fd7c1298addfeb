//! What one object uses of a ResourceQuota, as kube's quota evaluators count it
//! (pkg/quota/v1/evaluator/core and the generic object counter): every object counts as
//! `count/<resource>[.<group>]` (and the few core kinds by their bare plural as well); pods add
//! their compute requests and limits while not terminal, Services their load balancers and node
//! ports, PersistentVolumeClaims their storage (also per storage class).
//!
//! Amounts are milli-units (`flotilla_apis::quantity`), so `1` object is 1000.

use std::collections::BTreeMap;

use flotilla_apis::quantity::parse_millis;
use serde_json::Value;

/// Resource name → amount in milli-units.
pub(crate) type Usage = BTreeMap<String, i64>;

/// One whole unit.
pub(crate) const ONE: i64 = 1000;

/// Core kinds whose quota resource name is also their bare plural (`configmaps`, not only
/// `count/configmaps`).
const BARE_COUNTED: &[&str] = &[
    "pods",
    "services",
    "configmaps",
    "secrets",
    "persistentvolumeclaims",
    "replicationcontrollers",
    "resourcequotas",
];

/// Suffix of a per-storage-class resource name: `gold.storageclass.storage.k8s.io/requests.storage`.
pub(crate) const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";

/// The object-count resource name of `plural` in `group`.
pub(crate) fn count_name(group: &str, plural: &str) -> String {
    if group.is_empty() {
        format!("count/{plural}")
    } else {
        format!("count/{plural}.{group}")
    }
}

/// The `(group, plural)` whose objects a quota resource name counts or measures, if any.
pub(crate) fn counted_resource(name: &str) -> Option<(String, String)> {
    let core = |p: &str| Some((String::new(), p.to_string()));
    if let Some(rest) = name.strip_prefix("count/") {
        return match rest.split_once('.') {
            Some((plural, group)) => Some((group.to_string(), plural.to_string())),
            None => core(rest),
        };
    }
    if BARE_COUNTED.contains(&name) {
        return core(name);
    }
    if name.starts_with("services.") {
        return core("services");
    }
    if name == "requests.storage" || name.contains(STORAGE_CLASS_SUFFIX) {
        return core("persistentvolumeclaims");
    }
    if is_compute(name) {
        return core("pods");
    }
    None
}

/// Is `name` a pod compute resource of a quota (`cpu`, `limits.memory`, `requests.x.io/gpu`,
/// `hugepages-2Mi`, ...)?
pub(crate) fn is_compute(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage")
        || name.starts_with("hugepages-")
        || name.starts_with("limits.")
        || (name.starts_with("requests.") && name != "requests.storage")
}

/// What `obj`, an object of `plural` in `group`, uses. `now` (seconds since the epoch) tells
/// whether a deleted pod's grace period is over.
pub(crate) fn usage(group: &str, plural: &str, obj: &Value, now: i64) -> Usage {
    let mut u = Usage::new();
    u.insert(count_name(group, plural), ONE);
    if !group.is_empty() {
        return u;
    }
    match plural {
        "pods" if counts_compute(obj, now) => u.append(&mut pod_compute(obj)),
        "pods" => {}
        "services" => u.append(&mut service(obj)),
        "persistentvolumeclaims" => u.append(&mut claim(obj)),
        p if BARE_COUNTED.contains(&p) => {
            u.insert(p.to_string(), ONE);
        }
        _ => {}
    }
    u
}

/// A pod in a terminal phase, or deleted with its grace period over, uses no compute (and no
/// `pods`); `count/pods` counts it still, as kube does.
fn counts_compute(pod: &Value, now: i64) -> bool {
    let phase = pod.pointer("/status/phase").and_then(Value::as_str);
    if matches!(phase, Some("Succeeded" | "Failed")) {
        return false;
    }
    let deleted = pod
        .pointer("/metadata/deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
    let grace = pod
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64);
    match (deleted, grace) {
        (Some(at), Some(grace)) => now <= at.timestamp() + grace,
        _ => true,
    }
}

/// A resource list (`{"cpu": "500m"}`) in milli-units; what does not parse is left out.
pub(crate) fn resource_list(v: Option<&Value>) -> Usage {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, q)| Some((k.clone(), parse_millis(q.as_str()?)?)))
                .collect()
        })
        .unwrap_or_default()
}

/// A container's requests: what it requests, or else what it is limited to (as API defaulting
/// sets a missing request to the limit); and its limits.
fn container_resources(c: &Value) -> (Usage, Usage) {
    let limits = resource_list(c.pointer("/resources/limits"));
    let mut requests = resource_list(c.pointer("/resources/requests"));
    for (k, v) in &limits {
        requests.entry(k.clone()).or_insert(*v);
    }
    (requests, limits)
}

fn add_into(to: &mut Usage, from: &Usage) {
    for (k, v) in from {
        *to.entry(k.clone()).or_insert(0) += v;
    }
}

fn max_into(to: &mut Usage, from: &Usage) {
    for (k, v) in from {
        let e = to.entry(k.clone()).or_insert(0);
        *e = (*e).max(*v);
    }
}

/// The pod's requests and limits as kube's resource helper sums them: the containers' (and
/// restartable init containers') sum, at least any one init container's, plus the overhead.
pub(crate) fn pod_requests_limits(pod: &Value) -> (Usage, Usage) {
    let list = |p: &str| {
        pod.pointer(p)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (mut requests, mut limits) = (Usage::new(), Usage::new());
    for c in list("/spec/containers") {
        let (r, l) = container_resources(&c);
        add_into(&mut requests, &r);
        add_into(&mut limits, &l);
    }
    let (mut init_r, mut init_l) = (Usage::new(), Usage::new());
    for c in list("/spec/initContainers") {
        let (r, l) = container_resources(&c);
        if c["restartPolicy"] == "Always" {
            // A sidecar runs beside the containers.
            add_into(&mut requests, &r);
            add_into(&mut limits, &l);
        } else {
            max_into(&mut init_r, &r);
            max_into(&mut init_l, &l);
        }
    }
    max_into(&mut requests, &init_r);
    max_into(&mut limits, &init_l);
    let overhead = resource_list(pod.pointer("/spec/overhead"));
    add_into(&mut requests, &overhead);
    for (k, v) in &overhead {
        if let Some(l) = limits.get_mut(k) {
            *l += v;
        }
    }
    (requests, limits)
}

/// Is this an extended resource (`example.com/dongle`): named with a domain that is not
/// Kubernetes' own?
fn is_extended(name: &str) -> bool {
    name.contains('/') && !name.contains("kubernetes.io/") && !name.starts_with("requests.")
}

fn pod_compute(pod: &Value) -> Usage {
    let (requests, limits) = pod_requests_limits(pod);
    let mut u = Usage::from([("pods".to_string(), ONE)]);
    for r in ["cpu", "memory", "ephemeral-storage"] {
        if let Some(v) = requests.get(r) {
            u.insert(r.to_string(), *v);
            u.insert(format!("requests.{r}"), *v);
        }
        if let Some(v) = limits.get(r) {
            u.insert(format!("limits.{r}"), *v);
        }
    }
    for (r, v) in &requests {
        if r.starts_with("hugepages-") {
            u.insert(r.clone(), *v);
            u.insert(format!("requests.{r}"), *v);
        } else if is_extended(r) {
            u.insert(format!("requests.{r}"), *v);
        }
    }
    u
}

fn service(svc: &Value) -> Usage {
    let ports = svc
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut u = Usage::from([
        ("services".to_string(), ONE),
        ("services.loadbalancers".to_string(), 0),
        ("services.nodeports".to_string(), 0),
    ]);
    let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX / ONE) * ONE;
    match svc.pointer("/spec/type").and_then(Value::as_str) {
        Some("NodePort") => {
            u.insert("services.nodeports".into(), count(ports.len()));
        }
        Some("LoadBalancer") => {
            // Without allocated node ports only the ports that name one take one.
            let node_ports = if svc.pointer("/spec/allocateLoadBalancerNodePorts")
                == Some(&Value::Bool(false))
            {
                ports
                    .iter()
                    .filter(|p| p["nodePort"].as_i64().is_some_and(|n| n != 0))
                    .count()
            } else {
                ports.len()
            };
            u.insert("services.nodeports".into(), count(node_ports));
            u.insert("services.loadbalancers".into(), ONE);
        }
        _ => {}
    }
    u
}

/// A claim's storage class: `spec.storageClassName`, or the beta annotation that preceded it.
fn storage_class(pvc: &Value) -> Option<&str> {
    pvc.pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .or_else(|| pvc.pointer("/spec/storageClassName"))
        .and_then(Value::as_str)
        .filter(|c| !c.is_empty())
}

fn claim(pvc: &Value) -> Usage {
    let mut u = Usage::from([("persistentvolumeclaims".to_string(), ONE)]);
    let class = storage_class(pvc);
    if let Some(c) = class {
        u.insert(
            format!("{c}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"),
            ONE,
        );
    }
    let storage = pvc
        .pointer("/spec/resources/requests/storage")
        .and_then(Value::as_str)
        .and_then(parse_millis)
        // Storage is counted in whole bytes.
        .map(|m| (m + ONE - 1) / ONE * ONE);
    if let Some(s) = storage {
        u.insert("requests.storage".into(), s);
        if let Some(c) = class {
            u.insert(format!("{c}{STORAGE_CLASS_SUFFIX}requests.storage"), s);
        }
    }
    u
}

/// A quantity for status and messages: whole units (`2`), binary multiples from a mebi up when
/// the amount is one (`500Mi`, `10Gi`: memory and storage), else milli-units (`500m`).
pub(crate) fn format_amount(millis: i64) -> String {
    if millis % ONE != 0 {
        return format!("{millis}m");
    }
    let units = millis / ONE;
    for (suffix, shift) in [("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20)] {
        let size = 1i64 << shift;
        if units != 0 && units % size == 0 {
            return format!("{}{suffix}", units / size);
        }
    }
    units.to_string()
}
