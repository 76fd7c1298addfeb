//! Reading and writing `metadata` of objects held as `serde_json::Value`.

use serde_json::{json, Map, Value};

/// `metadata`, created if absent (returns None if the object isn't a JSON object).
pub fn meta_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    let o = obj.as_object_mut()?;
    let m = o
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !m.is_object() {
        *m = Value::Object(Map::new());
    }
    m.as_object_mut()
}

/// A string field of `metadata`.
pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

/// Set a field of `metadata` (no-op on non-objects).
pub fn set_meta(obj: &mut Value, field: &str, v: Value) {
    if let Some(m) = meta_mut(obj) {
        m.insert(field.to_string(), v);
    }
}

/// Remove a field of `metadata`.
pub fn remove_meta(obj: &mut Value, field: &str) -> Option<Value> {
    meta_mut(obj)?.remove(field)
}

/// `metadata.finalizers`.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// `obj` without the finalizer `name` in `metadata.finalizers` (the finalizer's work is done).
pub fn without_finalizer(obj: &Value, name: &str) -> Value {
    let mut new = obj.clone();
    let rest: Vec<String> = finalizers(obj).into_iter().filter(|f| f != name).collect();
    set_meta(&mut new, "finalizers", json!(rest));
    new
}

/// The current time as Kubernetes writes it (RFC 3339, seconds precision, `Z`).
pub fn now_rfc3339() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The resourceVersion as a revision number.
pub fn parse_rv(s: &str) -> Option<i64> {
    s.parse().ok().filter(|n: &i64| *n >= 0)
}

pub mod generation;

/// Validation of names as Kubernetes does it.
pub mod names {
    /// RFC 1123 subdomain (most object names): lower-case alphanumerics, '-' and '.', ≤ 253.
    pub fn dns_subdomain(name: &str) -> Option<String> {
        if name.is_empty() || name.len() > 253 {
            return Some("must be no more than 253 characters".into());
        }
        let ok = name.split('.').all(|part| label_ok(part, 253));
        (!ok).then(|| {
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_string()
        })
    }

    /// RFC 1123 label (namespaces, services): ≤ 63, no dots.
    pub fn dns_label(name: &str) -> Option<String> {
        if name.is_empty() || name.len() > 63 {
            return Some("must be no more than 63 characters".into());
        }
        (!label_ok(name, 63)).then(|| {
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \
             '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or \
             '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
                .to_string()
        })
    }

    fn label_ok(s: &str, max: usize) -> bool {
        let b = s.as_bytes();
        !b.is_empty()
            && s.len() <= max
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-'
    }

    /// Path-segment names (RBAC roles etc. allow ':' and upper case): no '/', '%', '.', '..'.
    pub fn path_segment(name: &str) -> Option<String> {
        if name.is_empty() {
            return Some("name or generateName is required".into());
        }
        if name == "." || name == ".." {
            return Some(format!("may not be '{name}'"));
        }
        if name.contains('/') || name.contains('%') {
            return Some("may not contain '/' or '%'".into());
        }
        None
    }
}

#[cfg(test)]
mod tests;
