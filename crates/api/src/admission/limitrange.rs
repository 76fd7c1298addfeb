//! LimitRanger, as kube-apiserver's admission plugin: a new pod's containers get the
//! namespace's LimitRange defaults (`default` limits, `defaultRequest` requests, recorded in
//! the `kubernetes.io/limit-ranger` annotation), then pods and PersistentVolumeClaims are held
//! to `min`, `max` and `maxLimitRequestRatio` (403 with kube's wording).

use serde_json::{json, Map, Value};

use super::quota::forbidden;
use super::quota::usage::{format_amount, pod_requests_limits, Usage};
use crate::error::Result;
use crate::meta::meta_str;
use crate::registry::ResourceInfo;
use crate::request::RequestInfo;
use crate::Api;

/// The annotation saying which defaults a pod got.
pub(crate) const ANNOTATION: &str = "kubernetes.io/limit-ranger";

/// One `spec.limits` item with the defaults a LimitRange gets when stored (kube's
/// SetDefaults_LimitRangeItem: a Container's default limit is its max, its default request its
/// default limit, else its min).
pub(crate) fn defaulted_item(item: &Value) -> Value {
    let mut item = item.clone();
    if item["type"] != "Container" {
        return item;
    }
    let fill = |item: &mut Value, to: &str, from: &str| {
        let src = item.get(from).and_then(Value::as_object).cloned();
        let Some(obj) = item.as_object_mut() else {
            return;
        };
        let dst = obj.entry(to).or_insert_with(|| json!({}));
        if let (Some(src), Some(dst)) = (src, dst.as_object_mut()) {
            for (k, v) in src {
                dst.entry(k).or_insert(v);
            }
        }
    };
    fill(&mut item, "default", "max");
    fill(&mut item, "defaultRequest", "default");
    fill(&mut item, "defaultRequest", "min");
    item
}

/// Every (defaulted) limit item of the LimitRanges in `ns`.
fn items(api: &Api, ns: &str) -> Vec<Value> {
    let snap = api.registry.snapshot();
    let Some(lr) = snap.get("", "v1", "limitranges") else {
        return Vec::new();
    };
    let (ranges, _, _) = api
        .cache
        .list(&lr.key_prefix(Some(ns)), None, None, |_| true);
    ranges
        .iter()
        .flat_map(|r| {
            r.value()
                .pointer("/spec/limits")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .map(|i| defaulted_item(&i))
        .collect()
}

/// The admission step for a new object a client sends: a pod gets its defaults, then pods and
/// claims are held to the bounds.
pub(crate) fn admit_new(
    api: &Api,
    info: &RequestInfo,
    res: &ResourceInfo,
    new: &mut Value,
) -> Result<()> {
    let Some((kind, items)) = applicable(api, info, res, new) else {
        return Ok(());
    };
    if kind == "pods" {
        apply_defaults(&items, new);
    }
    refuse(res, new, bounds(kind, &items, new))
}

/// The admission step for a client's update: only a claim's request can change what the
/// bounds judge (a pod's containers cannot change); a deleting object is left alone.
pub(crate) fn admit_update(
    api: &Api,
    info: &RequestInfo,
    res: &ResourceInfo,
    old: &Value,
    new: &Value,
) -> Result<()> {
    if old.pointer("/metadata/deletionTimestamp").is_some() {
        return Ok(());
    }
    match applicable(api, info, res, new) {
        Some((kind @ "persistentvolumeclaims", items)) => {
            refuse(res, new, bounds(kind, &items, new))
        }
        _ => Ok(()),
    }
}

/// The kind LimitRanger judges `new` as, and the limit items of its namespace; `None` when
/// there is nothing to judge (another kind, a subresource, no LimitRange).
fn applicable(
    api: &Api,
    info: &RequestInfo,
    res: &ResourceInfo,
    new: &Value,
) -> Option<(&'static str, Vec<Value>)> {
    let kind = match (res.group.as_str(), res.plural.as_str()) {
        ("", "pods") => "pods",
        ("", "persistentvolumeclaims") => "persistentvolumeclaims",
        _ => return None,
    };
    if info.subresource.is_some() {
        return None;
    }
    let ns = meta_str(new, "namespace")?;
    let items = items(api, ns);
    (!items.is_empty()).then_some((kind, items))
}

fn bounds(kind: &str, items: &[Value], obj: &Value) -> Vec<String> {
    if kind == "pods" {
        check_pod(items, obj)
    } else {
        check_claim(items, obj)
    }
}

/// 403 with every broken bound, as Kubernetes' error aggregate prints itself.
fn refuse(res: &ResourceInfo, obj: &Value, errors: Vec<String>) -> Result<()> {
    let why = match errors.as_slice() {
        [] => return Ok(()),
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    Err(forbidden(res, meta_str(obj, "name").unwrap_or(""), &why))
}

/// Fills in each container's missing requests and limits from the Container items' defaults
/// (a request missing where a limit is given is the limit, as pod defaulting has it).
pub(crate) fn apply_defaults(items: &[Value], pod: &mut Value) {
    let (mut requests, mut limits) = (Map::new(), Map::new());
    for item in items.iter().filter(|i| i["type"] == "Container") {
        if let Some(d) = item["defaultRequest"].as_object() {
            requests.extend(d.clone());
        }
        if let Some(d) = item["default"].as_object() {
            limits.extend(d.clone());
        }
    }
    let mut notes: Vec<String> = Vec::new();
    for (field, what) in [
        ("containers", "container"),
        ("initContainers", "init container"),
    ] {
        let Some(list) = pod
            .pointer_mut(&format!("/spec/{field}"))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        for c in list {
            let name = c["name"].as_str().unwrap_or_default().to_string();
            let Some(resources) = c
                .as_object_mut()
                .map(|o| o.entry("resources").or_insert_with(|| json!({})))
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            let given_limits = resources
                .get("limits")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let mut set_requests = Vec::new();
            if let Some(req) = entry_map(resources, "requests") {
                for (k, v) in &given_limits {
                    req.entry(k.clone()).or_insert_with(|| v.clone());
                }
                set_requests = fill_missing(req, &requests);
            }
            let set_limits = entry_map(resources, "limits")
                .map(|l| fill_missing(l, &limits))
                .unwrap_or_default();
            // Nothing given and nothing set reads as nothing, as in kube.
            resources.retain(|_, v| v.as_object().is_none_or(|m| !m.is_empty()));
            if !set_requests.is_empty() {
                notes.push(format!(
                    "{} request for {what} {name}",
                    set_requests.join(", ")
                ));
            }
            if !set_limits.is_empty() {
                notes.push(format!("{} limit for {what} {name}", set_limits.join(", ")));
            }
        }
    }
    if !notes.is_empty() {
        let note = format!("LimitRanger plugin set: {}", notes.join("; "));
        if let Some(meta) = crate::meta::meta_mut(pod) {
            let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
            if let Some(a) = annotations.as_object_mut() {
                a.insert(ANNOTATION.into(), Value::String(note));
            }
        }
    }
}

/// The object at `key` (made one if it is missing or not an object).
fn entry_map<'a>(obj: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    let v = obj.entry(key).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    v.as_object_mut()
}

/// Copies what `to` lacks from `defaults`; the names set, sorted.
fn fill_missing(to: &mut Map<String, Value>, defaults: &Map<String, Value>) -> Vec<String> {
    let mut set: Vec<String> = defaults
        .keys()
        .filter(|k| !to.contains_key(*k))
        .cloned()
        .collect();
    for k in &set {
        if let Some(v) = defaults.get(k) {
            to.insert(k.clone(), v.clone());
        }
    }
    set.sort();
    set
}

/// The raw quantity text of `name` in a resource list, and its amount.
fn amount(list: &Value, name: &str) -> Option<(String, i64)> {
    let text = list.get(name)?.as_str()?.to_string();
    let millis = flotilla_apis::quantity::parse_millis(&text)?;
    Some((text, millis))
}

/// A resource list of computed amounts, as quantities.
fn as_list(u: &Usage) -> Value {
    Value::Object(
        u.iter()
            .map(|(k, v)| (k.clone(), Value::String(format_amount(*v))))
            .collect(),
    )
}

/// Checks one item's min, max and ratio against `requests`/`limits` of a container or pod.
fn check(item: &Value, type_: &str, requests: &Value, limits: &Value, errors: &mut Vec<String>) {
    let bounds = |key: &str| {
        let mut v: Vec<(String, String, i64)> = item[key]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter_map(|(k, _)| amount(&item[key], k).map(|(t, a)| (k.clone(), t, a)))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    for (r, text, min) in bounds("min") {
        let (req, lim) = (amount(requests, &r), amount(limits, &r));
        match req {
            None => errors.push(format!(
                "minimum {r} usage per {type_} is {text}.  No request is specified"
            )),
            Some((t, v)) if v < min => errors.push(format!(
                "minimum {r} usage per {type_} is {text}, but request is {t}"
            )),
            _ => match lim {
                Some((t, v)) if v < min => errors.push(format!(
                    "minimum {r} usage per {type_} is {text}, but limit is {t}"
                )),
                _ => {}
            },
        }
    }
    for (r, text, max) in bounds("max") {
        let (req, lim) = (amount(requests, &r), amount(limits, &r));
        match lim {
            None => errors.push(format!(
                "maximum {r} usage per {type_} is {text}.  No limit is specified"
            )),
            Some((t, v)) if v > max => errors.push(format!(
                "maximum {r} usage per {type_} is {text}, but limit is {t}"
            )),
            _ => match req {
                Some((t, v)) if v > max => errors.push(format!(
                    "maximum {r} usage per {type_} is {text}, but request is {t}"
                )),
                _ => {}
            },
        }
    }
    for (r, text, ratio) in bounds("maxLimitRequestRatio") {
        let req = amount(requests, &r).map(|(_, v)| v).filter(|v| *v != 0);
        let lim = amount(limits, &r).map(|(_, v)| v).filter(|v| *v != 0);
        match (req, lim) {
            (None, _) => errors.push(format!(
                "{r} max limit to request ratio per {type_} is {text}, but no request is specified or request is 0"
            )),
            (_, None) => errors.push(format!(
                "{r} max limit to request ratio per {type_} is {text}, but no limit is specified or limit is 0"
            )),
            (Some(req), Some(lim)) => {
                let observed = lim as f64 / req as f64;
                if observed * 1000.0 > ratio as f64 {
                    errors.push(format!(
                        "{r} max limit to request ratio per {type_} is {text}, but provided ratio is {observed:.6}"
                    ));
                }
            }
        }
    }
}

/// A pod against the Container items (each container) and Pod items (the pod's sums).
pub(crate) fn check_pod(items: &[Value], pod: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    for item in items {
        match item["type"].as_str() {
            Some("Container") => {
                for field in ["/spec/containers", "/spec/initContainers"] {
                    for c in pod
                        .pointer(field)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let r = &c["resources"];
                        check(item, "Container", &r["requests"], &r["limits"], &mut errors);
                    }
                }
            }
            Some("Pod") => {
                let (requests, limits) = pod_requests_limits(pod);
                check(
                    item,
                    "Pod",
                    &as_list(&requests),
                    &as_list(&limits),
                    &mut errors,
                );
            }
            _ => {}
        }
    }
    errors
}

/// A claim's requested storage against the PersistentVolumeClaim items.
pub(crate) fn check_claim(items: &[Value], pvc: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let requests = pvc
        .pointer("/spec/resources/requests")
        .cloned()
        .unwrap_or_else(|| json!({}));
    for item in items
        .iter()
        .filter(|i| i["type"] == "PersistentVolumeClaim")
    {
        // Only the request counts for a claim: its max bounds the request, not a limit.
        let only_max = json!({"max": item["max"]});
        let only_min = json!({"min": item["min"]});
        check(
            &only_min,
            "PersistentVolumeClaim",
            &requests,
            &json!({}),
            &mut errors,
        );
        let mut over = Vec::new();
        check(
            &only_max,
            "PersistentVolumeClaim",
            &json!({}),
            &requests,
            &mut over,
        );
        errors.extend(over.into_iter().map(|e| {
            e.replace("No limit is specified", "No request is specified")
                .replace("but limit is", "but request is")
        }));
    }
    errors
}

#[cfg(test)]
mod tests;
