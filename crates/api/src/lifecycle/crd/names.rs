//! Which of a CRD's names are accepted, as kube-apiserver's naming controller decides: a name
//! (plural, singular, short names; kind, list kind) another CRD of the same group has already
//! been accepted under is refused (`NamesAccepted` False, reason `PluralConflict`, …, message
//! `"foos" is already in use`) and the CRD is not established until it is free; names already
//! accepted for this CRD stay its own.

use std::collections::BTreeSet;

use serde_json::{json, Value};

/// The outcome for one CRD.
#[derive(Debug, PartialEq)]
pub(super) struct Names {
    /// `status.acceptedNames`.
    pub accepted: Value,
    /// The `NamesAccepted` condition's status, reason and message.
    pub ok: bool,
    pub reason: &'static str,
    pub message: String,
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v.get(k).and_then(Value::as_str).unwrap_or("")
}

fn list(v: &Value, k: &str) -> Vec<String> {
    v.get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The names `crd` asks for, with kube's defaults (singular: the kind in lower case, list
/// kind: the kind and `List`).
fn requested(crd: &Value) -> Value {
    let mut n = crd.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let kind = s(&n, "kind").to_owned();
    if s(&n, "singular").is_empty() {
        n["singular"] = json!(kind.to_lowercase());
    }
    if s(&n, "listKind").is_empty() {
        n["listKind"] = json!(format!("{kind}List"));
    }
    n
}

/// Decide `crd`'s accepted names against `others` (every other CRD).
pub(super) fn accept(crd: &Value, others: &[Value]) -> Names {
    let group = crd.pointer("/spec/group");
    let name = crd.pointer("/metadata/name");
    let mut resources = BTreeSet::new();
    let mut kinds = BTreeSet::new();
    for o in others {
        if o.pointer("/spec/group") != group || o.pointer("/metadata/name") == name {
            continue;
        }
        let a = o.pointer("/status/acceptedNames").unwrap_or(&Value::Null);
        resources.insert(s(a, "plural").to_owned());
        resources.insert(s(a, "singular").to_owned());
        resources.extend(list(a, "shortNames"));
        kinds.insert(s(a, "kind").to_owned());
        kinds.insert(s(a, "listKind").to_owned());
    }
    resources.remove("");
    kinds.remove("");
    let want = requested(crd);
    let had = crd
        .pointer("/status/acceptedNames")
        .cloned()
        .unwrap_or(json!({}));
    let mut out = had.clone();
    let mut verdict: Option<(&'static str, String)> = None;
    let fresh =
        |want: &str, had: &str, used: &BTreeSet<String>| want == had || !used.contains(want);
    for (field, reason, used) in [
        ("plural", "PluralConflict", &resources),
        ("singular", "SingularConflict", &resources),
        ("kind", "KindConflict", &kinds),
        ("listKind", "ListKindConflict", &kinds),
    ] {
        let w = s(&want, field);
        if fresh(w, s(&had, field), used) {
            out[field] = json!(w);
        } else {
            verdict = Some((reason, format!("{w:?} is already in use")));
        }
        if field == "singular" {
            // Short names come after the singular, as kube checks them.
            let wanted = list(&want, "shortNames");
            let kept = list(&had, "shortNames");
            let taken: Vec<String> = wanted
                .iter()
                .filter(|n| !kept.contains(n) && resources.contains(*n))
                .map(|n| format!("{n:?} is already in use"))
                .collect();
            if taken.is_empty() {
                if wanted.is_empty() {
                    if let Some(o) = out.as_object_mut() {
                        o.remove("shortNames");
                    }
                } else {
                    out["shortNames"] = json!(wanted);
                }
            } else {
                let message = if taken.len() == 1 {
                    taken.concat()
                } else {
                    format!("[{}]", taken.join(", "))
                };
                verdict = Some(("ShortNamesConflict", message));
            }
        }
    }
    match want.get("categories") {
        Some(c) => out["categories"] = c.clone(),
        None => {
            if let Some(o) = out.as_object_mut() {
                o.remove("categories");
            }
        }
    }
    match verdict {
        None => Names {
            accepted: out,
            ok: true,
            reason: "NoConflicts",
            message: "no conflicts found".into(),
        },
        Some((reason, message)) => Names {
            accepted: out,
            ok: false,
            reason,
            message,
        },
    }
}

#[cfg(test)]
mod tests;
