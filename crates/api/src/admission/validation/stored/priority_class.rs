//! `ValidatePriorityClass` and `ValidatePriorityClassUpdate`: names with the `system-` prefix are
//! the two built-in classes only, user classes stay at or below one billion, and neither the
//! value nor the preemption policy ever changes.

use serde_json::Value;

use super::{immutable_field, shown, Causes};

/// The classes kube-apiserver creates at start, and their values.
pub(crate) const SYSTEM_CLASSES: &[(&str, i64, &str)] = &[
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// The largest value of a class users define.
const HIGHEST_USER_DEFINABLE: i64 = 1_000_000_000;

const PREFIX: &str = "system-";

pub(super) fn causes(old: Option<&Value>, obj: &Value) -> Causes {
    let mut causes = Vec::new();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let value = obj.get("value").and_then(Value::as_i64).unwrap_or(0);
    let global_default = obj.get("globalDefault") == Some(&Value::Bool(true));
    if name.starts_with(PREFIX) {
        if let Err(why) = known_system_class(name, value, global_default) {
            causes.push((
                "metadata.name".into(),
                format!(
                    "Forbidden: priority class names with '{PREFIX}' prefix are reserved for \
                     system use only. error: {why}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE {
        causes.push((
            "value".into(),
            format!(
                "Forbidden: maximum allowed value of a user defined priority is \
                 {HIGHEST_USER_DEFINABLE}"
            ),
        ));
    }
    if let Some(policy) = obj.get("preemptionPolicy").filter(|p| !p.is_null()) {
        if !matches!(policy.as_str(), Some("Never" | "PreemptLowerPriority")) {
            causes.push((
                "preemptionPolicy".into(),
                format!(
                    "Unsupported value: {}: supported values: \"Never\", \"PreemptLowerPriority\"",
                    shown(Some(policy))
                ),
            ));
        }
    }
    if let Some(old) = old {
        if old.get("value") != obj.get("value") {
            causes.push((
                "value".into(),
                "Forbidden: may not be changed in an update.".into(),
            ));
        }
        immutable_field(
            &mut causes,
            "preemptionPolicy",
            old,
            obj,
            "/preemptionPolicy",
        );
    }
    causes
}

/// `IsKnownSystemPriorityClass`.
fn known_system_class(name: &str, value: i64, global_default: bool) -> Result<(), String> {
    let Some((_, want, _)) = SYSTEM_CLASSES.iter().find(|(n, _, _)| *n == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if *want != value {
        return Err(format!("value of {name} PriorityClass must be {want}"));
    }
    if global_default {
        return Err(format!(
            "globalDefault of {name} PriorityClass must be false"
        ));
    }
    Ok(())
}
