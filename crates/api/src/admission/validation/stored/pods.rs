//! `ValidatePodUpdate`: a pod's spec is fixed once created, but for its containers' images,
//! `activeDeadlineSeconds`, added tolerations, removed scheduling gates and a negative grace
//! period set to 1. (Ephemeral containers change through their own subresource, which
//! admission holds to them; a node is assigned once, through `pods/binding`.)

use serde_json::{Map, Value};

use super::Causes;

const UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,\
`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),\
`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

pub(super) fn update_causes(old: &Value, new: &Value) -> Causes {
    let mut causes = Vec::new();
    let (Some(old_spec), Some(new_spec)) = (old.get("spec"), new.get("spec")) else {
        return causes;
    };
    if old_spec == new_spec {
        return causes;
    }
    ephemeral_causes(&mut causes, old_spec, new_spec);
    let old_tolerations = list(old_spec, "tolerations");
    let new_tolerations = list(new_spec, "tolerations");
    for (i, t) in old_tolerations.iter().enumerate() {
        if !new_tolerations.contains(t) {
            causes.push((
                format!("spec.tolerations[{i}]"),
                "Forbidden: existing toleration can not be modified except its tolerationSeconds"
                    .into(),
            ));
        }
    }
    let old_gates = list(old_spec, "schedulingGates");
    for g in list(new_spec, "schedulingGates") {
        if !old_gates.contains(&g) {
            causes.push((
                "spec.schedulingGates".into(),
                "Forbidden: only deletion is allowed, but found new scheduling gate".into(),
            ));
        }
    }
    let mut munged = new_spec.clone();
    for key in ["containers", "initContainers"] {
        let old_list = list(old_spec, key);
        if let Some(items) = munged.get_mut(key).and_then(Value::as_array_mut) {
            for (i, c) in items.iter_mut().enumerate() {
                if let (Some(o), Some(c)) = (old_list.get(i), c.as_object_mut()) {
                    c.insert(
                        "image".into(),
                        o.get("image").cloned().unwrap_or(Value::Null),
                    );
                }
            }
        }
    }
    for key in [
        "activeDeadlineSeconds",
        "tolerations",
        "schedulingGates",
        "ephemeralContainers",
    ] {
        copy(old_spec, &mut munged, key);
    }
    // pods/binding assigns a node once; validation sees that write as any other update.
    if old_spec
        .get("nodeName")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        copy(old_spec, &mut munged, "nodeName");
    }
    let grace = |s: &Value| {
        s.get("terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
    };
    if grace(old_spec).is_some_and(|g| g < 0) && grace(&munged) == Some(1) {
        copy(old_spec, &mut munged, "terminationGracePeriodSeconds");
    }
    if &munged != old_spec {
        causes.push(spec_change_cause(old_spec, &munged));
    }
    causes
}

/// The cause kube gives a pod update that changes what it may not: `spec` (the whole spec
/// for `old_spec` → `new_spec`, as kube's message shows a diff).
pub(crate) fn spec_change_cause(old_spec: &Value, new_spec: &Value) -> (String, String) {
    (
        "spec".into(),
        format!(
            "Forbidden: pod updates may not change fields other than {UPDATABLE}\n{}",
            diff(old_spec, new_spec)
        ),
    )
}

/// `ValidatePodEphemeralContainersUpdate`: ephemeral containers are added, never removed or
/// changed (matched by name: a patch does not keep their order).
fn ephemeral_causes(causes: &mut Causes, old_spec: &Value, new_spec: &Value) {
    let new_list = list(new_spec, "ephemeralContainers");
    for old in list(old_spec, "ephemeralContainers") {
        let name = old.get("name").and_then(Value::as_str).unwrap_or("");
        let why = match new_list.iter().find(|c| c["name"] == old["name"]) {
            None => format!("existing ephemeral containers {name:?} may not be removed\n"),
            Some(c) if *c != old => format!(
                "existing ephemeral containers {name:?} may not be changed\n{}",
                diff(&old, c)
            ),
            Some(_) => continue,
        };
        causes.push((
            "spec.ephemeralContainers".into(),
            format!("Forbidden: {why}"),
        ));
    }
}

fn list(spec: &Value, key: &str) -> Vec<Value> {
    spec.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn copy(from: &Value, to: &mut Value, key: &str) {
    if let Some(o) = to.as_object_mut() {
        match from.get(key) {
            Some(v) => o.insert(key.into(), v.clone()),
            None => o.remove(key),
        };
    }
}

/// Which top-level spec fields differ (kube prints a Go diff of the whole spec).
fn diff(old: &Value, new: &Value) -> String {
    let empty = Map::new();
    let o = old.as_object().unwrap_or(&empty);
    let n = new.as_object().unwrap_or(&empty);
    let mut keys: Vec<&String> = o.keys().chain(n.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| o.get(*k) != n.get(*k))
        .map(|k| {
            let show = |v: Option<&Value>| v.map_or_else(|| "null".to_string(), Value::to_string);
            format!("  spec.{k}: {} -> {}", show(o.get(k)), show(n.get(k)))
        })
        .collect::<Vec<_>>()
        .join("\n")
}
