//! What kube-apiserver's validation of built-in kinds checks beyond their schema, applied to the
//! object a write would store (after the create or the change is worked out, as Kubernetes
//! validates the new object of every create and update).
//!
//! The schema is checked in [`super::schema`], names and metadata in [`super::metadata`]. This
//! module holds per-kind content rules, worded as `k8s.io/apimachinery`'s field errors
//! (`data[a b]: Invalid value: …`, `[]: Too long: …`) so clients see the messages they know.
//! [`flotilla`] holds the rules of flotilla's own kinds (served as CRDs).

mod flotilla;

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
        (false, "", "ConfigMap") => config_map(obj),
        (false, "", "Secret") => secret(obj),
        _ => Vec::new(),
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
mod tests {
    use serde_json::json;

    use super::*;

    fn res(plural: &str) -> ResourceInfo {
        let reg = crate::registry::Registry::new();
        let snap = reg.snapshot();
        let r = snap.get("", "v1", plural).map(|r| (**r).clone());
        r.expect("served")
    }

    fn message(plural: &str, obj: Value) -> Option<String> {
        check(&res(plural), &obj).err().map(|e| e.message)
    }

    #[test]
    fn config_map_data_is_limited_to_one_mebibyte_over_both_maps() {
        let half = "x".repeat(MAX_DATA_SIZE / 2);
        let b64 = |n: usize| base64::engine::general_purpose::STANDARD.encode(vec![0u8; n]);
        let at_limit = json!({"metadata": {"name": "big"},
            "data": {"a": half, "b": half}});
        assert_eq!(message("configmaps", at_limit), None);
        let over = json!({"metadata": {"name": "big"}, "data": {"a": half},
            "binaryData": {"b": b64(MAX_DATA_SIZE / 2 + 1)}});
        assert_eq!(
            message("configmaps", over).as_deref(),
            Some(r#"ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes"#)
        );
        // binaryData counts decoded bytes, not the base64 text.
        let encoded = json!({"metadata": {"name": "bin"},
            "binaryData": {"b": b64(MAX_DATA_SIZE - 10)}});
        assert_eq!(message("configmaps", encoded), None);
        // Multi-byte characters count as their UTF-8 bytes, as Go's len() does.
        let wide = json!({"metadata": {"name": "wide"},
            "data": {"a": "é".repeat(MAX_DATA_SIZE / 2 + 1)}});
        assert!(message("configmaps", wide).is_some());
    }

    #[test]
    fn secret_data_and_string_data_are_limited_together() {
        let b64 = base64::engine::general_purpose::STANDARD.encode(vec![1u8; MAX_DATA_SIZE]);
        let full = json!({"metadata": {"name": "s"}, "data": {"a": b64}});
        assert_eq!(message("secrets", full.clone()), None);
        let mut over = full.clone();
        over["stringData"] = json!({"b": "x"});
        assert_eq!(
            message("secrets", over).as_deref(),
            Some(r#"Secret "s" is invalid: data: Too long: must have at most 1048576 bytes"#)
        );
        // A stringData key replaces the data key of the same name.
        let mut replaced = full;
        replaced["stringData"] = json!({"a": "x"});
        assert_eq!(message("secrets", replaced), None);
    }

    #[test]
    fn keys_are_config_keys_in_one_map_only() {
        let e = message(
            "configmaps",
            json!({"metadata": {"name": "k"}, "data": {"a b": "1", "ok": "2"}, "binaryData": {"ok": ""}}),
        )
        .unwrap_or_default();
        assert!(
            e.starts_with(r#"ConfigMap "k" is invalid: [data[a b]: Invalid value: "a b": a valid config key must consist of alphanumeric characters"#),
            "{e}"
        );
        assert!(
            e.contains(r#"data[ok]: Invalid value: "ok": duplicate of key present in binaryData"#),
            "{e}"
        );
        let e = message(
            "secrets",
            json!({"metadata": {"name": "s"}, "data": {"..x": ""}}),
        );
        assert_eq!(
            e.as_deref(),
            Some(
                r#"Secret "s" is invalid: data[..x]: Invalid value: "..x": must not start with '..'"#
            )
        );
        assert_eq!(
            message(
                "configmaps",
                json!({"metadata": {"name": "fine"}, "data": {"a.b_C-1": "v"}})
            ),
            None
        );
    }
}
