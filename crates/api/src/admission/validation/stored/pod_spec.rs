//! The core of `ValidatePodSpec` for a new pod, pod template or replication controller: at
//! least one container, each named (a DNS label, unique in the pod) with an image, ports in
//! range, and the enumerated policies among their values.

use serde_json::Value;

use super::Causes;

/// Causes of the pod spec at `spec` (a field path such as `spec` or `template.spec`).
pub(super) fn causes(path: &str, spec: &Value) -> Causes {
    let mut causes = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let containers = spec.get("containers").and_then(Value::as_array);
    if containers.is_none_or(Vec::is_empty) {
        causes.push((format!("{path}.containers"), "Required value".into()));
    }
    for key in ["initContainers", "containers"] {
        for (i, c) in spec
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            container(&mut causes, &format!("{path}.{key}[{i}]"), c, &mut names);
        }
    }
    enumerated(
        &mut causes,
        &format!("{path}.restartPolicy"),
        spec.get("restartPolicy"),
        &["Always", "Never", "OnFailure"],
    );
    enumerated(
        &mut causes,
        &format!("{path}.dnsPolicy"),
        spec.get("dnsPolicy"),
        &["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"],
    );
    causes
}

fn container(causes: &mut Causes, path: &str, c: &Value, names: &mut Vec<String>) {
    let name = c.get("name").and_then(Value::as_str).unwrap_or("");
    if name.is_empty() {
        causes.push((format!("{path}.name"), "Required value".into()));
    } else if !dns_label(name) {
        causes.push((
            format!("{path}.name"),
            format!(
                "Invalid value: {name:?}: a lowercase RFC 1123 label must consist of lower case \
                 alphanumeric characters or '-', and must start and end with an alphanumeric \
                 character (e.g. 'my-name',  or '123-abc', regex used for validation is \
                 '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ),
        ));
    } else if names.iter().any(|n| n == name) {
        causes.push((format!("{path}.name"), format!("Duplicate value: {name:?}")));
    } else {
        names.push(name.to_string());
    }
    if c.get("image")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        causes.push((format!("{path}.image"), "Required value".into()));
    }
    enumerated(
        causes,
        &format!("{path}.imagePullPolicy"),
        c.get("imagePullPolicy"),
        &["Always", "IfNotPresent", "Never"],
    );
    for (i, p) in c
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let port = p.get("containerPort").and_then(Value::as_i64).unwrap_or(0);
        if !(1..=65535).contains(&port) {
            causes.push((
                format!("{path}.ports[{i}].containerPort"),
                if port == 0 {
                    "Required value".to_string()
                } else {
                    format!("Invalid value: {port}: must be between 1 and 65535, inclusive")
                },
            ));
        }
        enumerated(
            causes,
            &format!("{path}.ports[{i}].protocol"),
            p.get("protocol"),
            &["SCTP", "TCP", "UDP"],
        );
    }
}

/// A string field that, when set, is one of `allowed` (listed as kube lists them, sorted).
fn enumerated(causes: &mut Causes, path: &str, v: Option<&Value>, allowed: &[&str]) {
    let Some(s) = v.and_then(Value::as_str) else {
        return;
    };
    if !allowed.contains(&s) {
        let list = allowed
            .iter()
            .map(|a| format!("{a:?}"))
            .collect::<Vec<_>>()
            .join(", ");
        causes.push((
            path.to_string(),
            format!("Unsupported value: {s:?}: supported values: {list}"),
        ));
    }
}

/// An RFC 1123 label: lower-case alphanumerics and '-', alphanumeric at both ends, ≤ 63.
fn dns_label(s: &str) -> bool {
    s.len() <= 63
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}
