//! kube-apiserver's `Priority` admission plugin: a new pod's `priority` and
//! `preemptionPolicy` come from its PriorityClass (or the global default one), and at most one
//! PriorityClass is the global default.

use serde_json::{json, Value};

use super::stored;
use crate::admission::quota::forbidden;
use crate::error::Result;
use crate::meta::meta_str;
use crate::registry::ResourceInfo;
use crate::Api;

/// The priority of pods when no PriorityClass is the global default.
const DEFAULT_PRIORITY: i64 = 0;

fn priority_classes(api: &Api) -> Vec<Value> {
    stored(api, "scheduling.k8s.io", "v1", "priorityclasses")
}

/// The global default class: of several (a race), the one with the lowest value.
fn global_default(classes: &[Value]) -> Option<&Value> {
    classes
        .iter()
        .filter(|c| c["globalDefault"] == true)
        .min_by_key(|c| c["value"].as_i64().unwrap_or(0))
}

/// A pod's create resolves its priority; an update keeps the one it was given.
pub(super) fn admit_pod(
    api: &Api,
    res: &ResourceInfo,
    sub: Option<&str>,
    old: Option<&Value>,
    new: &mut Value,
) -> Result<()> {
    if sub.is_some() {
        return Ok(());
    }
    if let Some(old) = old {
        for field in ["priority", "preemptionPolicy"] {
            let kept = old.pointer(&format!("/spec/{field}")).cloned();
            if let (Some(v), Some(spec)) = (kept, new.get_mut("spec")) {
                if spec.get(field).is_none_or(Value::is_null) {
                    spec[field] = v;
                }
            }
        }
        return Ok(());
    }
    let name = meta_str(new, "name").unwrap_or("").to_string();
    let refuse = |why: String| Err(forbidden(res, &name, &why));
    let classes = priority_classes(api);
    let class_name = new
        .pointer("/spec/priorityClassName")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let (class_name, priority, policy) = if class_name.is_empty() {
        match global_default(&classes) {
            Some(c) => (
                meta_str(c, "name").unwrap_or("").to_string(),
                c["value"].as_i64().unwrap_or(0),
                c.get("preemptionPolicy").cloned(),
            ),
            None => (
                String::new(),
                DEFAULT_PRIORITY,
                Some(json!("PreemptLowerPriority")),
            ),
        }
    } else {
        let Some(c) = classes
            .iter()
            .find(|c| meta_str(c, "name") == Some(&class_name))
        else {
            return refuse(format!("no PriorityClass with name {class_name} was found"));
        };
        (
            class_name,
            c["value"].as_i64().unwrap_or(0),
            c.get("preemptionPolicy").cloned(),
        )
    };
    let Some(spec) = new.get_mut("spec").filter(|s| s.is_object()) else {
        return Ok(());
    };
    if let Some(given) = spec.get("priority").and_then(Value::as_i64) {
        if given != priority {
            return refuse(format!(
                "the integer value of priority ({given}) must not be provided in pod spec; \
                 priority admission controller computed {priority} from the given PriorityClass name"
            ));
        }
    }
    if !class_name.is_empty() {
        spec["priorityClassName"] = json!(class_name);
    }
    spec["priority"] = json!(priority);
    if let Some(policy) = policy.filter(|p| !p.is_null()) {
        if let Some(given) = spec.get("preemptionPolicy").and_then(Value::as_str) {
            if Some(given) != policy.as_str() {
                return refuse(format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod \
                     spec; priority admission controller computed {} from the given PriorityClass \
                     name",
                    policy.as_str().unwrap_or("")
                ));
            }
        }
        spec["preemptionPolicy"] = policy;
    }
    Ok(())
}

/// A PriorityClass may be the global default only while no other one is.
pub(super) fn admit_priority_class(api: &Api, res: &ResourceInfo, new: &Value) -> Result<()> {
    if new["globalDefault"] != true {
        return Ok(());
    }
    let name = meta_str(new, "name").unwrap_or("");
    let classes = priority_classes(api);
    match global_default(&classes).and_then(|c| meta_str(c, "name")) {
        Some(other) if other != name => Err(forbidden(
            res,
            name,
            &format!(
                "PriorityClass {other} is already marked as default. Only one default can exist"
            ),
        )),
        _ => Ok(()),
    }
}
