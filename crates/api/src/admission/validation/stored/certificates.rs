//! `ValidateCertificateSigningRequestCreate` and its update forms: a PEM certificate request,
//! usages, a signer name `<domain>/<path>`, at least ten minutes asked for, and approval
//! conditions that are unique, `True`, and never both Approved and Denied; an update keeps
//! whatever approval it had.

use base64::Engine;
use serde_json::Value;

use super::{shown, Causes};

const USAGES: &[&str] = &[
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

pub(super) fn causes(old: Option<&Value>, obj: &Value) -> Causes {
    let mut causes = Vec::new();
    if old.is_none() {
        spec_causes(&mut causes, obj);
    }
    condition_causes(&mut causes, obj);
    if let Some(old) = old {
        for kind in ["Approved", "Denied", "Failed"] {
            let count = |o: &Value| conditions(o).iter().filter(|c| c["type"] == kind).count();
            if count(obj) < count(old) {
                causes.push((
                    "status.conditions".into(),
                    format!("Forbidden: updates may not remove a condition of type {kind:?}"),
                ));
            }
        }
    }
    causes
}

fn spec_causes(causes: &mut Causes, obj: &Value) {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let request = spec.get("request").and_then(Value::as_str).unwrap_or("");
    let pem = base64::engine::general_purpose::STANDARD
        .decode(request)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .unwrap_or_default();
    let why = match pem.trim_start().strip_prefix("-----BEGIN ") {
        None => Some("PEM block type must be CERTIFICATE REQUEST"),
        Some(rest) if !rest.starts_with("CERTIFICATE REQUEST-----") => {
            Some("PEM block type must be CERTIFICATE REQUEST")
        }
        Some(_) => None,
    };
    if let Some(why) = why {
        causes.push((
            "spec.request".into(),
            format!("Invalid value: []byte{{...}}: {why}"),
        ));
    }
    let usages: Vec<&str> = spec
        .get("usages")
        .and_then(Value::as_array)
        .map(|u| u.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if usages.is_empty() {
        causes.push(("spec.usages".into(), "Required value".into()));
    }
    let supported = USAGES
        .iter()
        .map(|u| format!("{u:?}"))
        .collect::<Vec<_>>()
        .join(", ");
    for (i, u) in usages.iter().enumerate() {
        if !USAGES.contains(u) {
            causes.push((
                format!("spec.usages[{i}]"),
                format!("Unsupported value: {u:?}: supported values: {supported}"),
            ));
        } else if usages[..i].contains(u) {
            causes.push((
                format!("spec.usages[{i}]"),
                format!("Duplicate value: {u:?}"),
            ));
        }
    }
    let signer = spec.get("signerName").and_then(Value::as_str).unwrap_or("");
    if signer == "kubernetes.io/legacy-unknown" {
        causes.push((
            "spec.signerName".into(),
            format!(
                "Invalid value: {signer:?}: the legacy signerName is not allowed via this API version"
            ),
        ));
    } else if signer.is_empty() {
        causes.push(("spec.signerName".into(), "Required value".into()));
    } else if !signer_name_ok(signer) {
        causes.push((
            "spec.signerName".into(),
            format!(
                "Invalid value: {signer:?}: must be a fully qualified domain and path of the form \
                 'example.com/signer-name'"
            ),
        ));
    }
    if let Some(secs) = spec.get("expirationSeconds").and_then(Value::as_i64) {
        if secs < 600 {
            causes.push((
                "spec.expirationSeconds".into(),
                format!(
                    "Invalid value: {secs}: may not specify a duration less than 600 seconds (10 minutes)"
                ),
            ));
        }
    }
}

/// `<domain>/<path>`: a DNS subdomain with a dot, then a non-empty path.
fn signer_name_ok(name: &str) -> bool {
    let Some((domain, path)) = name.split_once('/') else {
        return false;
    };
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    domain.contains('.') && domain.split('.').all(label_ok) && !path.is_empty()
}

fn conditions(obj: &Value) -> &[Value] {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Conditions have a type; Approved, Denied and Failed are unique and `True`; a request is
/// never both approved and denied.
fn condition_causes(causes: &mut Causes, obj: &Value) {
    let mut seen: Vec<&str> = Vec::new();
    for (i, c) in conditions(obj).iter().enumerate() {
        let path = format!("status.conditions[{i}]");
        let kind = c["type"].as_str().unwrap_or("");
        if kind.is_empty() {
            causes.push((format!("{path}.type"), "Required value".into()));
            continue;
        }
        if matches!(kind, "Approved" | "Denied" | "Failed") {
            if seen.contains(&kind) {
                causes.push((format!("{path}.type"), format!("Duplicate value: {kind:?}")));
            }
            if c["status"] != "True" {
                causes.push((
                    format!("{path}.status"),
                    format!(
                        "Unsupported value: {}: supported values: \"True\"",
                        shown(c.get("status"))
                    ),
                ));
            }
        }
        seen.push(kind);
    }
    if seen.contains(&"Approved") && seen.contains(&"Denied") {
        causes.push((
            "status.conditions".into(),
            "Invalid value: \"Approved\": Approved and Denied conditions are mutually exclusive"
                .into(),
        ));
    }
}
