//! ResourceQuota admission, as kube-apiserver's ResourceQuota plugin: a write that would take
//! a namespace's usage of a quota's resource past its hard limit is refused (403, `exceeded
//! quota: NAME, requested: ..., used: ..., limited: ...`). Also what the quota status loop
//! ([`crate::lifecycle`]) reports as `status.used`: the same evaluation, so both agree.
//!
//! Usage is read from the watch cache at admission time instead of from the quotas' status
//! as kube does; the count is then never stale, and a new quota is enforced before its status
//! is written. (Two creates racing for the last unit may both pass; the status shows it.)

pub(crate) mod scopes;
pub(crate) mod usage;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{ApiError, Result};
use crate::meta::meta_str;
use crate::registry::ResourceInfo;
use crate::request::RequestInfo;
use crate::Api;
use usage::{counted_resource, format_amount, usage, Usage};

/// A quota's `spec.hard` in milli-units (amounts that do not parse are left out).
pub(crate) fn hard(quota: &Value) -> Usage {
    usage::resource_list(quota.pointer("/spec/hard"))
}

/// The seconds since the epoch, for pods' deletion grace.
pub(crate) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The served resource `(group, plural)` at its storage version.
fn served(api: &Api, group: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
    // The group's few versions looked up, not every served resource scanned: this runs for
    // each resource a quota limits, on every create it judges.
    let snap = api.registry.snapshot();
    let (_, versions) = snap.groups().iter().find(|(g, _)| g == group)?;
    versions
        .iter()
        .filter_map(|v| snap.get(group, v, plural))
        .find(|r| r.storage_version)
        .cloned()
}

/// Where the ResourceQuotas of `ns` are stored (`None` while they are not served). Asked on
/// every namespaced create, so a map lookup, not a scan of every resource.
pub(crate) fn quotas_prefix(api: &Api, ns: &str) -> Option<String> {
    let snap = api.registry.snapshot();
    Some(snap.get("", "v1", "resourcequotas")?.key_prefix(Some(ns)))
}

/// What the objects in `ns` use of each resource `quota` limits. A resource the hub does not
/// serve (a `count/` of a custom resource not yet defined) has no entry, as in kube until its
/// resource is discovered.
pub(crate) fn used(api: &Api, ns: &str, quota: &Value, now: i64) -> Usage {
    let scopes = scopes::of_quota(quota);
    let mut by_resource: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for name in hard(quota).into_keys() {
        if let Some(gr) = counted_resource(&name) {
            by_resource.entry(gr).or_default().push(name);
        }
    }
    let mut used = Usage::new();
    for ((group, plural), names) in by_resource {
        let Some(res) = served(api, &group, &plural) else {
            continue;
        };
        for n in &names {
            used.insert(n.clone(), 0);
        }
        if counted_only(&group, &plural) {
            // Each object uses one of each name, and only an unscoped quota tracks it: a
            // count of keys, not a reading of every object (this runs on every create).
            if scopes.is_empty() {
                let n = api.cache.count(&res.key_prefix(Some(ns))) as i64;
                for name in &names {
                    used.insert(name.clone(), n * usage::ONE);
                }
            }
            continue;
        }
        let (objects, _, _) = api
            .cache
            .list(&res.key_prefix(Some(ns)), None, None, |_| true);
        for o in objects {
            let v = crate::registry::storage::from_storage(&res, o.value());
            if !scopes::matches(&scopes, &group, &plural, &v) {
                continue;
            }
            let u = usage(&group, &plural, &v, now);
            for n in &names {
                if let (Some(total), Some(x)) = (used.get_mut(n), u.get(n)) {
                    *total += x;
                }
            }
        }
    }
    used
}

/// Does an object of `group`/`plural` use exactly one of each quota resource naming it, whatever
/// it holds? All but pods (compute), services (node ports, load balancers) and claims
/// (storage); and only pods are subject to scopes (see [`usage::usage`], [`scopes::matches`]).
fn counted_only(group: &str, plural: &str) -> bool {
    !(group.is_empty() && matches!(plural, "pods" | "services" | "persistentvolumeclaims"))
}

/// A quota's status as it should read: `hard` copied from the spec, `used` as counted now.
pub(crate) fn status(api: &Api, ns: &str, quota: &Value, now: i64) -> Value {
    let used: serde_json::Map<String, Value> = used(api, ns, quota, now)
        .into_iter()
        .map(|(k, v)| (k, Value::String(format_amount(v))))
        .collect();
    let hard = quota
        .pointer("/spec/hard")
        .cloned()
        .unwrap_or_else(|| json!({}));
    json!({"hard": hard, "used": used})
}

/// The admission step: may `new` (an object of `res`; `old` its stored version for an update)
/// be written under the quotas of its namespace?
pub(crate) fn admit(
    api: &Api,
    info: &RequestInfo,
    res: &ResourceInfo,
    old: Option<&Value>,
    new: &Value,
) -> Result<()> {
    // As kube's evaluators: objects are counted when created; of updates, only those that can
    // change what a Service or a claim uses (a pod's resources cannot change).
    let updates_charged = res.group.is_empty()
        && matches!(res.plural.as_str(), "services" | "persistentvolumeclaims");
    if !res.namespaced || info.subresource.is_some() || (old.is_some() && !updates_charged) {
        return Ok(());
    }
    let Some(ns) = meta_str(new, "namespace").filter(|n| !n.is_empty()) else {
        return Ok(());
    };
    let Some(prefix) = quotas_prefix(api, ns) else {
        return Ok(());
    };
    let (quotas, _, _) = api.cache.list(&prefix, None, None, |_| true);
    if quotas.is_empty() {
        return Ok(());
    }
    let now = now();
    let (group, plural) = (res.group.as_str(), res.plural.as_str());
    let mut delta = usage(group, plural, new, now);
    if let Some(old) = old {
        // An update is charged what it adds, never credited what it frees.
        let before = usage(group, plural, old, now);
        for (k, v) in delta.iter_mut() {
            *v = (*v - before.get(k).copied().unwrap_or(0)).max(0);
        }
    }
    for q in quotas {
        let quota = q.value();
        if !scopes::matches(&scopes::of_quota(&quota), group, plural, new) {
            continue;
        }
        let hard = hard(&quota);
        let requested: Usage = delta
            .iter()
            .filter(|(k, v)| **v > 0 && hard.contains_key(*k))
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        if requested.is_empty() {
            continue;
        }
        let used = used(api, ns, &quota, now);
        let exceeded: Vec<&String> = requested
            .iter()
            .filter(|(k, v)| used.get(*k).copied().unwrap_or(0) + **v > hard[*k])
            .map(|(k, _)| k)
            .collect();
        if exceeded.is_empty() {
            continue;
        }
        let show = |u: &Usage| {
            exceeded
                .iter()
                .map(|k| format!("{k}={}", format_amount(u.get(*k).copied().unwrap_or(0))))
                .collect::<Vec<_>>()
                .join(",")
        };
        let why = format!(
            "exceeded quota: {}, requested: {}, used: {}, limited: {}",
            q.name,
            show(&requested),
            show(&used),
            show(&hard)
        );
        return Err(forbidden(res, meta_str(new, "name").unwrap_or(""), &why));
    }
    Ok(())
}

/// kube-apiserver's admission refusal: `configmaps "x" is forbidden: <why>`.
pub(crate) fn forbidden(res: &ResourceInfo, name: &str, why: &str) -> ApiError {
    let resource = res.group_resource();
    let subject = if name.is_empty() {
        resource
    } else {
        format!("{resource} {name:?}")
    };
    ApiError {
        details: Some(json!({"name": name, "group": res.group, "kind": res.plural})),
        ..ApiError::forbidden(format!("{subject} is forbidden: {why}"))
    }
}

#[cfg(test)]
mod tests;
