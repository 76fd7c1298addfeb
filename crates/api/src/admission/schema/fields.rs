//! Field validation as kube-apiserver reports it (`fieldValidation=Strict|Warn|Ignore`):
//! the duplicate fields of a body ([`crate::request::strict`]) and the fields its kind does not
//! know ([`super::unknown`]), listed together in kube's order and words, then refused
//! (Strict), sent back as `Warning`s (Warn, the default) or dropped (Ignore).
//!
//! - A create or update: `strict decoding error: unknown field "spec.foo", duplicate field
//!   "spec.replicas"` (400). A built-in kind lists both in the body's order (one decoder finds
//!   both); a custom resource lists the duplicates, then its unknown metadata, then the other
//!   unknown fields sorted (its decoder, then its pruning). A YAML body's duplicates are one
//!   error in the YAML library's words, first.
//! - A patch: the patch's duplicates, then the fields the patched object does not know, in a
//!   422 naming the patch (`patch: Invalid value: "…": strict decoding error: …`).
//! - A server-side apply: unknown fields are always refused ([`undeclared_error`]); duplicates
//!   are judged by the handler (`error strict decoding YAML: …`).

use serde_json::{json, Value};

use super::unknown;
use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;
use crate::request::{strict, BodyFormat, FieldValidation};
use crate::schemas::Schemas;

/// The strict decoding errors of a create's or update's body `bytes`, decoded to `obj`.
pub(crate) fn body_errors(
    schemas: &Schemas,
    res: &ResourceInfo,
    format: BodyFormat,
    bytes: &[u8],
    obj: &Value,
) -> Vec<String> {
    let unknown = unknown_fields(schemas, res, obj);
    let mut errors = Vec::new();
    match format {
        BodyFormat::Json => {
            let dups = strict::json_duplicates(bytes);
            if res.custom || dups.is_empty() || unknown.is_empty() {
                errors.extend(dups);
                errors.extend(unknown.into_iter().map(unknown_error));
            } else {
                errors = in_body_order(bytes, dups, unknown);
            }
        }
        BodyFormat::Yaml => {
            if let Some(e) = std::str::from_utf8(bytes)
                .ok()
                .and_then(strict::yaml_duplicates)
            {
                errors.push(e);
            }
            errors.extend(unknown.into_iter().map(unknown_error));
        }
        _ => errors.extend(unknown.into_iter().map(unknown_error)),
    }
    errors
}

/// Drop the fields the patched object's kind does not know; returns them in the order
/// [`patched_errors`] lists them.
pub(crate) fn prune_patched(
    schemas: &Schemas,
    res: &ResourceInfo,
    format: BodyFormat,
    patched: &mut Value,
) -> Vec<String> {
    let mut unknown = prune_in_order(schemas, res, patched);
    if format == BodyFormat::StrategicMergePatch && !res.custom {
        // Decoded from a map, whose unknown fields come out sorted.
        unknown.sort();
    }
    unknown
}

/// The strict decoding errors of a patch: the duplicates of its body (`patch_errors`, from
/// [`patch_body_errors`]), then the fields the patched object does not know ([`prune_patched`]).
pub(crate) fn patched_errors(patch_errors: &[String], unknown: Vec<String>) -> Vec<String> {
    let mut errors = patch_errors.to_vec();
    errors.extend(unknown.into_iter().map(unknown_error));
    errors
}

/// The duplicates of a patch's body (a JSON patch's as `json patch duplicate field "[0].op"`).
pub(crate) fn patch_body_errors(format: BodyFormat, bytes: &[u8]) -> Vec<String> {
    let dups = strict::json_duplicates(bytes);
    match format {
        BodyFormat::JsonPatch => dups
            .into_iter()
            .map(|d| format!("json patch {d}"))
            .collect(),
        _ => dups,
    }
}

/// Judge a create's or update's errors at `level`: 400 (Strict), or the warnings (Warn).
pub(crate) fn judge(level: FieldValidation, errors: Vec<String>) -> Result<Vec<String>> {
    match level {
        FieldValidation::Strict if !errors.is_empty() => {
            Err(ApiError::bad_request(strict_message(&errors)))
        }
        FieldValidation::Warn => Ok(warnings(errors)),
        _ => Ok(Vec::new()),
    }
}

/// Judge a patch's errors at `level`: 422 naming the patch (Strict), or the warnings (Warn).
/// `shown` is the patch as kube-apiserver shows it: the patched object's JSON for a JSON or
/// merge patch, the patch as Go prints a map for a strategic merge patch.
pub(crate) fn judge_patch(
    level: FieldValidation,
    errors: Vec<String>,
    shown: impl FnOnce() -> String,
) -> Result<Vec<String>> {
    match level {
        FieldValidation::Strict if !errors.is_empty() => {
            let detail = format!("Invalid value: {:?}: {}", shown(), strict_message(&errors));
            let mut e = ApiError::new(422, "Invalid", format!(" \"\" is invalid: patch: {detail}"));
            e.details = Some(json!({
                "causes": [{"reason": "FieldValueInvalid", "message": detail, "field": "patch"}]
            }));
            Err(e)
        }
        FieldValidation::Warn => Ok(warnings(errors)),
        _ => Ok(Vec::new()),
    }
}

/// What a strategic merge patch looks like printed by Go (`%+v` of its map): kube-apiserver
/// shows it so in a strict error.
pub(crate) fn go_print(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_print).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_print(&m[k])))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// A server-side apply configuration with fields its schema does not declare: refused as
/// kube-apiserver's field manager refuses it (500, no reason, the fields in
/// structured-merge-diff's words), whatever the `fieldValidation`.
pub(crate) fn undeclared_error(
    schemas: &Schemas,
    res: &ResourceInfo,
    namespace: Option<&str>,
    name: &str,
    patch: &Value,
) -> Result<()> {
    let root = schemas.root_type(res);
    if root.is_empty() {
        return Ok(());
    }
    let fields = unknown::undeclared(&*schemas.set().snapshot(), &root, patch);
    if fields.is_empty() {
        return Ok(());
    }
    let errs: Vec<String> = fields
        .iter()
        .map(|f| format!("{f}: field not declared in schema"))
        .collect();
    let errs = if errs.len() == 1 {
        errs[0].clone()
    } else {
        format!("errors:\n  {}", errs.join("\n  "))
    };
    Err(ApiError::new(
        500,
        "",
        format!(
            "failed to create typed patch object ({}/{name}; {}/{}, Kind={}): {errs}",
            namespace.unwrap_or_default(),
            res.group,
            res.version,
            res.kind
        ),
    ))
}

/// `strict decoding error: a, b`.
fn strict_message(errors: &[String]) -> String {
    format!("strict decoding error: {}", errors.join(", "))
}

/// Each error a warning; a YAML error one per line, as kube-apiserver splits it.
fn warnings(errors: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in errors.iter().flat_map(|e| strict::yaml_warnings(e)) {
        if !out.contains(&w) {
            out.push(w);
        }
    }
    out
}

fn unknown_error(path: String) -> String {
    format!("unknown field {path:?}")
}

/// The fields of `obj` its kind does not know, in kube's order for the kind (a custom
/// resource's metadata first, then the rest sorted, as its decoder and pruning list them).
fn unknown_fields(schemas: &Schemas, res: &ResourceInfo, obj: &Value) -> Vec<String> {
    prune_in_order(schemas, res, &mut obj.clone())
}

/// [`unknown_fields`], dropped from `obj`.
fn prune_in_order(schemas: &Schemas, res: &ResourceInfo, obj: &mut Value) -> Vec<String> {
    let root = schemas.root_type(res);
    if root.is_empty() {
        return Vec::new();
    }
    let mut found = unknown::prune_unknown(&*schemas.set().snapshot(), &root, obj);
    if res.custom {
        let (mut meta, mut rest): (Vec<String>, Vec<String>) =
            found.into_iter().partition(|p| p.starts_with("metadata."));
        rest.sort();
        meta.append(&mut rest);
        found = meta;
    }
    found
}

/// Duplicates and unknown fields of a built-in kind's JSON body in the body's order, as its
/// one strict decoder meets them: a duplicate where its second occurrence is, an unknown field
/// where it first is.
fn in_body_order(bytes: &[u8], dups: Vec<String>, unknown: Vec<String>) -> Vec<String> {
    let order = strict::json_key_order(bytes);
    let mut at: std::collections::HashMap<&str, Vec<usize>> = std::collections::HashMap::new();
    for (i, p) in order.iter().enumerate() {
        at.entry(p.as_str()).or_default().push(i);
    }
    let position = |path: &str, nth: usize| {
        at.get(path)
            .and_then(|v| v.get(nth))
            .copied()
            .unwrap_or(usize::MAX)
    };
    let mut all: Vec<(usize, String)> = Vec::new();
    for d in dups {
        let path = d
            .strip_prefix("duplicate field ")
            .and_then(|q| serde_json::from_str::<String>(q).ok())
            .unwrap_or_default();
        all.push((position(&path, 1), d));
    }
    for u in unknown {
        all.push((position(&u, 0), unknown_error(u)));
    }
    all.sort_by_key(|(i, _)| *i);
    all.into_iter().map(|(_, e)| e).collect()
}

#[cfg(test)]
mod tests;
