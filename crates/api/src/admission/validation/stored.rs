//! Validation of the built-in kinds the hub stores without running them (issue 21, part A), as
//! kube-apiserver's `Validate<Kind>` and `Validate<Kind>Update` word it: PriorityClasses,
//! CertificateSigningRequests, pod specs and pods' update rules, and the fields other kinds never change.

mod certificates;
mod immutable;
mod pod_spec;
mod pods;
mod priority_class;

use serde_json::Value;

use super::Causes;

pub(crate) use pods::spec_change_cause;
pub(crate) use priority_class::SYSTEM_CLASSES as SYSTEM_PRIORITY_CLASSES;

/// The causes `obj` (an update from `old`, or a create) of `group`/`kind` is refused for.
pub(super) fn causes(group: &str, kind: &str, old: Option<&Value>, obj: &Value) -> Causes {
    let mut causes = match (group, kind) {
        ("scheduling.k8s.io", "PriorityClass") => priority_class::causes(old, obj),
        ("certificates.k8s.io", "CertificateSigningRequest") => certificates::causes(old, obj),
        ("", "Pod") => match old {
            Some(old) => pods::update_causes(old, obj),
            None => {
                let mut causes = spec_causes(obj, "spec");
                if obj
                    .pointer("/spec/ephemeralContainers")
                    .is_some_and(|e| !e.is_null())
                {
                    causes.push((
                        "spec.ephemeralContainers".into(),
                        "Forbidden: cannot be set on create".into(),
                    ));
                }
                causes
            }
        },
        ("", "PodTemplate") if old.is_none() => spec_causes(obj, "template.spec"),
        ("", "ReplicationController") if old.is_none() => spec_causes(obj, "spec.template.spec"),
        _ => Vec::new(),
    };
    if let Some(old) = old {
        causes.extend(immutable::causes(group, kind, old, obj));
    }
    causes
}

/// The pod spec at `path` (dotted) of a new object, if it has one.
fn spec_causes(obj: &Value, path: &str) -> Causes {
    let pointer = format!("/{}", path.replace('.', "/"));
    obj.pointer(&pointer)
        .map(|spec| pod_spec::causes(path, spec))
        .unwrap_or_default()
}

/// A value as apimachinery's field errors print it: strings quoted, numbers and booleans bare,
/// null for nothing, anything else as JSON.
fn shown(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "null".into(),
        Some(Value::String(s)) => format!("{s:?}"),
        Some(other) => other.to_string(),
    }
}

/// `field.Invalid(path, new, "field is immutable")` when `path` (a JSON pointer) differs.
fn immutable_field(causes: &mut Causes, field: &str, old: &Value, new: &Value, pointer: &str) {
    let (before, after) = (old.pointer(pointer), new.pointer(pointer));
    if before != after {
        causes.push((
            field.to_string(),
            format!("Invalid value: {}: field is immutable", shown(after)),
        ));
    }
}

#[cfg(test)]
mod tests;
