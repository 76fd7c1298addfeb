//! What kube-apiserver's validation of built-in kinds checks beyond their schema, applied to the
//! object a write would store (after the create or the change is worked out, as Kubernetes
//! validates the new object of every create and update).
//!
//! The schema is checked in [`super::schema`], names and metadata in [`super::metadata`]. This
//! module holds per-kind content rules, worded as `k8s.io/apimachinery`'s field errors
//! (`data[a b]: Invalid value: …`, `[]: Too long: …`) so clients see the messages they know.
//! [`flotilla`] holds the rules of flotilla's own kinds (served as CRDs).

mod flotilla;
mod stored;

pub(crate) use stored::{spec_change_cause, SYSTEM_PRIORITY_CLASSES};

use base64::Engine;
use serde_json::{Map, Value};

use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;

/// The most a ConfigMap's or Secret's data may hold, in bytes (`MaxSecretSize`: etcd's request
/// limit leaves room for one such object and its metadata).
pub const MAX_DATA_SIZE: usize = 1024 * 1024;

/// Refuse (422 Invalid) an object Kubernetes' validation would refuse (or, for flotilla's own
/// kinds, one that reaches beyond its scope: [`flotilla`]).
pub fn check(res: &ResourceInfo, obj: &Value) -> Result<()> {
    check_change(res, None, obj)
}

/// As [`check`], for an update from `old`: flotilla's rules look only at what the update
/// changes, so an object stored before a rule existed can still be updated otherwise.
pub fn check_update(res: &ResourceInfo, old: &Value, new: &Value) -> Result<()> {
    check_change(res, Some(old), new)
}

fn check_change(res: &ResourceInfo, old: Option<&Value>, obj: &Value) -> Result<()> {
    let causes = match (res.custom, res.group.as_str(), res.kind.as_str()) {
        (true, ..) => flotilla::causes(res, old, obj),
        (false, "", "ConfigMap") => {
            [config_map(obj), stored::causes("", "ConfigMap", old, obj)].concat()
        }
        (false, "", "Secret") => [secret(obj), stored::causes("", "Secret", old, obj)].concat(),
        (false, crate::flowcontrol::GROUP, kind) => {
            crate::flowcontrol::validation::causes(kind, obj)
        }
        // The CEL rules of its schemas compile (the rest of a CRD is checked as it is read).
        (false, "apiextensions.k8s.io", "CustomResourceDefinition") => {
            super::schema::rules::crd_causes_since(old, obj)
        }
        (false, super::policy::GROUP, kind) => super::policy::kinds::causes(kind, obj),
        (false, crate::aggregator::GROUP, _) => crate::aggregator::validation::causes(obj),
        (false, group, kind) => stored::causes(group, kind, old, obj),
    };
    if causes.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid_object(res, obj, causes))
}

type Causes = Vec<(String, String)>;

fn map<'a>(obj: &'a Value, field: &str) -> Option<&'a Map<String, Value>> {
    obj.get(field).and_then(Value::as_object)
}

/// The length of a `[]byte` field as Go holds it: base64 in JSON, decoded in the object.
fn bytes_len(v: &Value) -> usize {
    let s = v.as_str().unwrap_or("");
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_or(s.len(), |b| b.len())
}

/// `ValidateConfigMap`: keys of `data` and `binaryData` are config keys, a `data` key is not
/// also in `binaryData`, and the values together hold at most [`MAX_DATA_SIZE`] bytes.
fn config_map(obj: &Value) -> Causes {
    let mut causes = Vec::new();
    let data = map(obj, "data");
    let binary = map(obj, "binaryData");
    let mut total = 0;
    for (key, value) in data.into_iter().flatten() {
        key_causes(&mut causes, "data", key);
        if binary.is_some_and(|b| b.contains_key(key)) {
            causes.push((
                format!("data[{key}]"),
                format!("Invalid value: {key:?}: duplicate of key present in binaryData"),
            ));
        }
        total += value.as_str().map_or(0, str::len);
    }
    for (key, value) in binary.into_iter().flatten() {
        key_causes(&mut causes, "binaryData", key);
        total += bytes_len(value);
    }
    if total > MAX_DATA_SIZE {
        // The empty path: the error is about the whole object.
        causes.push(("[]".into(), too_long()));
    }
    causes
}

/// `ValidateSecret`: keys of `data` are config keys and the values hold at most
/// [`MAX_DATA_SIZE`] bytes. `stringData` counts too: Kubernetes merges it into `data` first.
fn secret(obj: &Value) -> Causes {
    let mut causes = Vec::new();
    let mut total = 0;
    let string_data = map(obj, "stringData");
    for (key, value) in map(obj, "data").into_iter().flatten() {
        if string_data.is_some_and(|s| s.contains_key(key)) {
            continue; // stringData's value wins
        }
        key_causes(&mut causes, "data", key);
        total += bytes_len(value);
    }
    for (key, value) in string_data.into_iter().flatten() {
        key_causes(&mut causes, "data", key);
        total += value.as_str().map_or(0, str::len);
    }
    if total > MAX_DATA_SIZE {
        causes.push(("data".into(), too_long()));
    }
    causes
}

fn too_long() -> String {
    format!("Too long: must have at most {MAX_DATA_SIZE} bytes")
}

/// `IsConfigMapKey`, one cause per failed rule.
fn key_causes(causes: &mut Causes, field: &str, key: &str) {
    let mut msgs = Vec::new();
    if key.len() > 253 {
        msgs.push("must be no more than 253 characters".to_string());
    }
    let key_chars = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_');
    if key.is_empty() || !key.chars().all(key_chars) {
        msgs.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' \
             (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is \
             '[-._a-zA-Z0-9]+')"
                .to_string(),
        );
    }
    match key {
        "." => msgs.push("must not be '.'".into()),
        ".." => msgs.push("must not be '..'".into()),
        k if k.starts_with("..") => msgs.push("must not start with '..'".into()),
        _ => {}
    }
    for msg in msgs {
        causes.push((
            format!("{field}[{key}]"),
            format!("Invalid value: {key:?}: {msg}"),
        ));
    }
}

#[cfg(test)]
mod tests;
