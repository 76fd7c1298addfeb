//! `x-kubernetes-embedded-resource` nodes hold a whole object, checked as
//! apiextensions-apiserver's `objectmeta` validation checks them: `apiVersion` and `kind` are
//! required non-empty strings (`kind` a DNS-1035 label in any case, `apiVersion` a
//! group/version), and `metadata.name`, when given, a valid path segment.

use serde_json::{Map, Value};

use super::keywords::{shown, Causes};

const DNS1035: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// The causes of embedded object `o` at `path`.
pub fn check(o: &Map<String, Value>, path: &str, causes: &mut Causes) {
    let at = |k: &str| format!("{path}.{k}");
    for k in ["apiVersion", "kind"] {
        match o.get(k) {
            None => causes.push((at(k), "Required value: must not be empty".into())),
            Some(Value::String(s)) if s.is_empty() => {
                causes.push((at(k), "Invalid value: \"\": must not be empty".into()))
            }
            Some(Value::String(s)) => {
                if let Some(detail) = problem(k, s) {
                    causes.push((at(k), format!("Invalid value: {s:?}: {detail}")));
                }
            }
            Some(v) => causes.push((
                at(k),
                format!("Invalid value: {}: must be a string", shown(v)),
            )),
        }
    }
    if let Some(name) = o
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
    {
        // path.ValidatePathSegmentName, as ValidateObjectMeta applies it to a CR's name.
        let detail = match name {
            "." | ".." => Some(format!("may not be '{name}'")),
            _ => ["/", "%"]
                .iter()
                .find(|c| name.contains(*c))
                .map(|c| format!("may not contain '{c}'")),
        };
        if let Some(detail) = detail {
            causes.push((
                at("metadata.name"),
                format!("Invalid value: {name:?}: {detail}"),
            ));
        }
    }
}

fn problem(k: &str, s: &str) -> Option<String> {
    if k == "apiVersion" {
        return (s.matches('/').count() > 1)
            .then(|| format!("unexpected GroupVersion string: {s}"));
    }
    let lower = s.to_lowercase();
    let mut errs = Vec::new();
    if lower.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    let b = lower.as_bytes();
    let ok = b.first().is_some_and(u8::is_ascii_lowercase)
        && b.last()
            .is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if !ok {
        errs.push(DNS1035.to_owned());
    }
    (!errs.is_empty()).then(|| {
        format!(
            "may have mixed case, but should otherwise match: {}",
            errs.join(",")
        )
    })
}

#[cfg(test)]
mod tests;
