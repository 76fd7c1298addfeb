//! CertificateSigningRequests as kube-apiserver's registry strategies treat them: the requester
//! (`spec.username`, `uid`, `groups`, `extra`) is whoever creates the request, whatever the body
//! says; no update changes the spec; the main resource changes no status; `/status` keeps the
//! approval conditions (`Approved`, `Denied`) as stored; `/approval` changes only the conditions.
//! Condition times the client leaves out are set now (or kept from the same condition before).
//! As kube's `CertificateApproval` and `CertificateSigning` plugins, approving takes the verb
//! `approve`, and issuing a certificate `sign`, on the request's signer (`signers` of
//! certificates.k8s.io, named `<signerName>` or `<domain>/*`).

use serde_json::{json, Map, Value};

use crate::auth::{Attributes, Decision, UserInfo};
use crate::meta::now_rfc3339;
use crate::Api;

/// A new request: its requester is the user creating it.
pub(super) fn requested_by(user: &UserInfo, new: &mut Value) {
    let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    for key in ["username", "uid", "groups", "extra"] {
        spec.remove(key);
    }
    if !user.name.is_empty() {
        spec.insert("username".into(), json!(user.name));
    }
    if !user.uid.is_empty() {
        spec.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        spec.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        spec.insert("extra".into(), json!(user.extra));
    }
}

/// An update through the main resource (`sub` None), `/status` or `/approval`; the causes it
/// is refused for (only `/approval` adds or changes approval conditions).
pub(super) fn update(sub: Option<&str>, old: &Value, new: &mut Value) -> Vec<(String, String)> {
    copy(old, new, "spec");
    match sub {
        None => copy(old, new, "status"),
        Some("status") => {
            for kind in ["Approved", "Denied"] {
                keep_instances(old, new, kind);
            }
            condition_times(old, new);
            return approval_unchanged(old, new);
        }
        Some("approval") => {
            condition_times(old, new);
            let conditions = new.pointer("/status/conditions").cloned();
            copy(old, new, "status");
            if let Some(c) = conditions {
                if let Some(status) = child(new, "status") {
                    status.insert("conditions".into(), c);
                }
            } else if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) {
                status.remove("conditions");
            }
        }
        Some(_) => {}
    }
    Vec::new()
}

/// `/status` neither adds nor changes an Approved or Denied condition (removing one is refused
/// by validation, whatever the path).
fn approval_unchanged(old: &Value, new: &Value) -> Vec<(String, String)> {
    let mut causes = Vec::new();
    for kind in ["Approved", "Denied"] {
        let of = |o: &Value| -> Vec<Value> {
            conditions(o)
                .iter()
                .filter(|c| c["type"] == kind)
                .cloned()
                .collect()
        };
        let (before, after) = (of(old), of(new));
        let why = if after.len() > before.len() {
            "add"
        } else if after.len() == before.len() && after != before {
            "modify"
        } else {
            continue;
        };
        causes.push((
            "status.conditions".to_string(),
            format!("Forbidden: updates may not {why} a condition of type {kind:?}"),
        ));
    }
    causes
}

fn child<'a>(obj: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    let o = obj.as_object_mut()?;
    let v = o.entry(key).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    v.as_object_mut()
}

/// `to[field] = from[field]` (removed where `from` has none).
fn copy(from: &Value, to: &mut Value, field: &str) {
    let Some(o) = to.as_object_mut() else { return };
    match from.get(field) {
        Some(v) => o.insert(field.into(), v.clone()),
        None => o.remove(field),
    };
}

fn conditions(obj: &Value) -> &[Value] {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `/status` cannot change conditions of `kind`: when old and new have as many, each new one
/// is the stored one at the same rank (a different count is judged by validation).
fn keep_instances(old: &Value, new: &mut Value, kind: &str) {
    let stored: Vec<Value> = conditions(old)
        .iter()
        .filter(|c| c["type"] == kind)
        .cloned()
        .collect();
    let Some(list) = new
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    let slots: Vec<usize> = (0..list.len())
        .filter(|&i| list[i]["type"] == kind)
        .collect();
    if slots.len() != stored.len() {
        return;
    }
    for (i, c) in slots.into_iter().zip(stored) {
        list[i] = c;
    }
}

/// `lastUpdateTime` now where missing; `lastTransitionTime` from the stored condition of the
/// same type and status, else now.
fn condition_times(old: &Value, new: &mut Value) {
    let stored = conditions(old).to_vec();
    let now = now_rfc3339();
    let Some(list) = new
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for c in list.iter_mut().filter_map(Value::as_object_mut) {
        let missing = |c: &Map<String, Value>, k: &str| c.get(k).is_none_or(Value::is_null);
        if missing(c, "lastUpdateTime") {
            c.insert("lastUpdateTime".into(), json!(now));
        }
        if missing(c, "lastTransitionTime") {
            let before = stored
                .iter()
                .find(|s| s["type"] == c["type"] && s["status"] == c["status"])
                .and_then(|s| s.get("lastTransitionTime"))
                .filter(|t| !t.is_null())
                .cloned();
            c.insert(
                "lastTransitionTime".into(),
                before.unwrap_or_else(|| json!(now)),
            );
        }
    }
}

/// Why `user` may not write `new` through `sub` (None when it may): `/approval` needs
/// `approve`, a changed `status.certificate` through `/status` needs `sign`, on the signer.
pub(super) fn signer_refusal(
    api: &Api,
    user: &UserInfo,
    sub: Option<&str>,
    old: &Value,
    new: &Value,
) -> Option<String> {
    let signer = old
        .pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or("");
    let verb = match sub {
        Some("approval") => "approve",
        Some("status")
            if old.pointer("/status/certificate") != new.pointer("/status/certificate") =>
        {
            "sign"
        }
        _ => return None,
    };
    let wildcard = signer
        .split_once('/')
        .map(|(domain, _)| format!("{domain}/*"));
    let allowed = std::iter::once(signer.to_string())
        .chain(wildcard)
        .any(|name| {
            let attrs = Attributes {
                user: user.clone(),
                verb: verb.into(),
                api_group: "certificates.k8s.io".into(),
                resource: "signers".into(),
                name,
                resource_request: true,
                ..Attributes::default()
            };
            matches!(
                api.access.decide(&api.cache, &attrs),
                Decision::Allow { .. }
            )
        });
    (!allowed).then(|| format!("user not permitted to {verb} requests with signerName {signer:?}"))
}
