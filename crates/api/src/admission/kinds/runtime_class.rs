//! kube-apiserver's `RuntimeClass` admission plugin for a new pod naming a RuntimeClass: the
//! class must exist (403), its pod overhead becomes the pod's (403 when the pod sets another),
//! its scheduling node selector and tolerations join the pod's (403 on a conflicting selector).

use serde_json::{Map, Value};

use super::stored;
use crate::admission::quota::forbidden;
use crate::error::Result;
use crate::meta::meta_str;
use crate::registry::ResourceInfo;
use crate::Api;

/// Admit a pod create (`new`) of `res`.
pub(super) fn admit_pod(api: &Api, res: &ResourceInfo, new: &mut Value) -> Result<()> {
    let name = meta_str(new, "name").unwrap_or("").to_string();
    let refuse = |why: String| Err(forbidden(res, &name, &why));
    let class_name = new
        .pointer("/spec/runtimeClassName")
        .and_then(Value::as_str)
        .map(String::from);
    let class = match &class_name {
        None => None,
        Some(c) => {
            let classes = stored(api, "node.k8s.io", "v1", "runtimeclasses");
            match classes.into_iter().find(|r| meta_str(r, "name") == Some(c)) {
                Some(r) => Some(r),
                None => return refuse(format!("pod rejected: RuntimeClass {c:?} not found")),
            }
        }
    };
    let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let fixed = class
        .as_ref()
        .and_then(|c| c.pointer("/overhead/podFixed"))
        .filter(|f| f.is_object())
        .cloned();
    let has_overhead = spec
        .get("overhead")
        .and_then(Value::as_object)
        .is_some_and(|o| !o.is_empty());
    match fixed {
        Some(fixed) => {
            if has_overhead && spec.get("overhead") != Some(&fixed) {
                return refuse(
                    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"
                        .into(),
                );
            }
            spec.insert("overhead".into(), fixed);
        }
        None if has_overhead => return refuse(
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
                .into(),
        ),
        None => {}
    }
    let Some(scheduling) = class.as_ref().and_then(|c| c.get("scheduling")) else {
        return Ok(());
    };
    if let Some(selector) = scheduling.get("nodeSelector").and_then(Value::as_object) {
        let pod_selector = spec
            .entry("nodeSelector")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(pod_selector) = pod_selector.as_object_mut() {
            for (k, v) in selector {
                match pod_selector.get(k) {
                    Some(p) if p != v => {
                        let show = |v: &Value| v.as_str().unwrap_or_default().to_string();
                        return refuse(format!(
                            "conflict: runtimeClass.scheduling.nodeSelector[{k}] = {}; \
                             pod.spec.nodeSelector[{k}] = {}",
                            show(v),
                            show(p)
                        ));
                    }
                    _ => {
                        pod_selector.insert(k.clone(), v.clone());
                    }
                }
            }
        }
    }
    if let Some(extra) = scheduling.get("tolerations").and_then(Value::as_array) {
        let list = spec
            .entry("tolerations")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(list) = list.as_array_mut() {
            for t in extra {
                if !list.contains(t) {
                    list.push(t.clone());
                }
            }
        }
    }
    Ok(())
}
