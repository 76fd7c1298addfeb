//! What kube-aggregator's APIService strategy does to a write: `SetDefaults_ServiceReference`
//! (port 443), `PrepareForCreate` (a local APIService is available the moment it exists) and
//! `ValidateAPIService` / `ValidateAPIServiceStatus`, worded as apimachinery's field errors.

use base64::Engine;
use serde_json::{json, Value};

use super::{available, LOCAL_MESSAGE, LOCAL_REASON};

/// A cause: the field path and the field error's message.
pub(crate) type Causes = Vec<(String, String)>;

/// The highest `spec.groupPriorityMinimum` kube accepts.
pub const MAX_GROUP_PRIORITY: i64 = 20000;
/// The highest `spec.versionPriority` kube accepts.
pub const MAX_VERSION_PRIORITY: i64 = 1000;

/// Defaults of every decoded APIService: a service reference without a port means 443.
pub(crate) fn defaults(obj: &mut Value) {
    if let Some(service) = obj.pointer_mut("/spec/service").filter(|s| s.is_object()) {
        if service.get("port").is_none_or(Value::is_null) {
            service["port"] = json!(443);
        }
    }
}

/// `PrepareForCreate`: the client's status is gone already (kube's is an empty struct); a
/// local APIService (no service) starts out `Available=True` with reason `Local`.
pub(crate) fn on_create(obj: &mut Value) {
    if is_local(obj) {
        available::set_condition(obj, "True", LOCAL_REASON, LOCAL_MESSAGE);
    } else if let Some(map) = obj.as_object_mut() {
        map.entry("status").or_insert_with(|| json!({}));
    }
}

/// Served by the hub itself rather than by a Service.
pub(crate) fn is_local(obj: &Value) -> bool {
    obj.pointer("/spec/service").is_none_or(Value::is_null)
}

/// The causes kube-apiserver refuses this APIService for (create, update, or status update:
/// the stored spec is valid, so judging spec and status together is judging what changed).
pub(crate) fn causes(obj: &Value) -> Causes {
    let mut causes = spec_causes(obj);
    causes.extend(status_causes(obj));
    causes
}

fn text<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// `ValidateAPIService`.
fn spec_causes(obj: &Value) -> Causes {
    let mut causes = Causes::new();
    let group = text(obj, "/spec/group");
    let version = text(obj, "/spec/version");
    let name = text(obj, "/metadata/name");
    let required = format!("{version}.{group}");
    if let Some(msg) = crate::meta::names::path_segment(name) {
        causes.push(invalid("metadata.name", &json!(name), &msg));
    } else if name != required {
        let msg = format!("must be `spec.version+\".\"+spec.group`: {required:?}");
        causes.push(invalid("metadata.name", &json!(name), &msg));
    }
    if group.is_empty() && version != "v1" {
        causes.push((
            "spec.group".into(),
            "Required value: only v1 may have an empty group and it better be legacy kube".into(),
        ));
    }
    if !group.is_empty() {
        for msg in dns1123_subdomain(group) {
            causes.push(invalid("spec.group", &json!(group), &msg));
        }
    }
    for msg in dns1035_label(version) {
        causes.push(invalid("spec.version", &json!(version), &msg));
    }
    for (field, max) in [
        ("groupPriorityMinimum", MAX_GROUP_PRIORITY),
        ("versionPriority", MAX_VERSION_PRIORITY),
    ] {
        let priority = obj["spec"][field].as_i64().unwrap_or(0);
        if !(1..=max).contains(&priority) {
            let msg = format!("must be positive and less than {max}");
            causes.push(invalid(&format!("spec.{field}"), &json!(priority), &msg));
        }
    }
    let ca_bundle = ca_bundle_len(obj);
    let insecure = obj
        .pointer("/spec/insecureSkipTLSVerify")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if is_local(obj) {
        if ca_bundle > 0 {
            causes.push(invalid(
                "spec.caBundle",
                &json!(format!("{ca_bundle} bytes")),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            causes.push(invalid(
                "spec.insecureSkipTLSVerify",
                &json!(true),
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return causes;
    }
    for field in ["namespace", "name"] {
        if text(obj, &format!("/spec/service/{field}")).is_empty() {
            causes.push((format!("spec.service.{field}"), "Required value".into()));
        }
    }
    let port = obj.pointer("/spec/service/port").and_then(Value::as_i64);
    if let Some(port) = port.filter(|p| !(1..=65535).contains(p)) {
        causes.push(invalid(
            "spec.service.port",
            &json!(port),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    if insecure && ca_bundle > 0 {
        causes.push(invalid(
            "spec.insecureSkipTLSVerify",
            &json!(true),
            "may not be true if caBundle is present",
        ));
    }
    causes
}

/// `ValidateAPIServiceStatus`: each condition's status is True, False or Unknown.
fn status_causes(obj: &Value) -> Causes {
    let conditions = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    conditions
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let status = c.get("status").and_then(Value::as_str).unwrap_or("");
            (!matches!(status, "True" | "False" | "Unknown")).then(|| {
                (
                    format!("status.conditions[{i}].status"),
                    format!(
                        "Unsupported value: {status:?}: supported values: \"True\", \"False\", \"Unknown\""
                    ),
                )
            })
        })
        .collect()
}

/// `field.Invalid(path, value, msg)`: the value as Go's `%#v`-like printing of field errors.
fn invalid(field: &str, value: &Value, msg: &str) -> (String, String) {
    let shown = match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    };
    (field.to_string(), format!("Invalid value: {shown}: {msg}"))
}

/// The caBundle's length in bytes (base64 in JSON, bytes in the object).
fn ca_bundle_len(obj: &Value) -> usize {
    let s = text(obj, "/spec/caBundle");
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_or(s.len(), |b| b.len())
}

fn label_chars_ok(s: &str) -> bool {
    s.bytes()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
}

/// `IsDNS1123Subdomain`: one message per rule broken, as Go returns them.
pub(crate) fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push("must be no more than 253 characters".to_string());
    }
    let label_ok =
        |l: &str| !l.is_empty() && label_chars_ok(l) && !l.starts_with('-') && !l.ends_with('-');
    if !value.split('.').all(label_ok) {
        errs.push(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \
             '-' or '.', and must start and end with an alphanumeric character (e.g. \
             'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
                .to_string(),
        );
    }
    errs
}

/// `IsDNS1035Label`: one message per rule broken, as Go returns them.
pub(crate) fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let ok = value.starts_with(|c: char| c.is_ascii_lowercase())
        && label_chars_ok(value)
        && !value.ends_with('-');
    if !ok {
        errs.push(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start \
             with an alphabetic character, and end with an alphanumeric character (e.g. \
             'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
                .to_string(),
        );
    }
    errs
}
