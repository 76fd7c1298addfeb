//! kube-apiserver's validation of FlowSchemas and PriorityLevelConfigurations, worded as its
//! field errors (called from [`crate::admission::validation`]). The mandatory objects' specs
//! are fixed: an update that changes one is refused, as in Kubernetes.

use serde_json::Value;

use super::bootstrap;

mod priority_level;

/// (field, message) pairs.
pub type Causes = Vec<(String, String)>;

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];

/// What is wrong with `obj`, a FlowSchema or PriorityLevelConfiguration (already defaulted).
pub fn causes(kind: &str, obj: &Value) -> Causes {
    let mut c = Check::default();
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let spec = obj.get("spec").unwrap_or(&Value::Null);
    match kind {
        "FlowSchema" => c.flow_schema(name, spec),
        "PriorityLevelConfiguration" => c.priority_level(name, spec),
        _ => return Vec::new(),
    }
    c.mandatory(kind, name, spec);
    c.conditions(obj.pointer("/status/conditions"));
    c.0
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn strs(items: &[Value]) -> Vec<&str> {
    items.iter().filter_map(Value::as_str).collect()
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn int(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

fn given<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key).filter(|x| !x.is_null())
}

/// As Go's field errors print a value: strings quoted, numbers bare, the rest as JSON.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

#[derive(Default)]
struct Check(Causes);

impl Check {
    fn invalid(&mut self, path: &str, value: &Value, msg: &str) {
        self.0.push((
            path.to_string(),
            format!("Invalid value: {}: {msg}", shown(value)),
        ));
    }

    fn required(&mut self, path: &str, msg: &str) {
        let m = if msg.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {msg}")
        };
        self.0.push((path.to_string(), m));
    }

    fn forbidden(&mut self, path: &str, msg: &str) {
        self.0.push((path.to_string(), format!("Forbidden: {msg}")));
    }

    fn not_supported(&mut self, path: &str, value: &Value, supported: &[&str]) {
        let s: Vec<String> = supported.iter().map(|x| format!("{x:?}")).collect();
        self.0.push((
            path.to_string(),
            format!(
                "Unsupported value: {}: supported values: {}",
                shown(value),
                s.join(", ")
            ),
        ));
    }

    fn flow_schema(&mut self, name: &str, spec: &Value) {
        let precedence = int(spec, "matchingPrecedence");
        let p = Value::from(precedence);
        if precedence <= 0 {
            self.invalid("spec.matchingPrecedence", &p, "must be a positive value");
        }
        if precedence > 10000 {
            self.invalid(
                "spec.matchingPrecedence",
                &p,
                "must not be greater than 10000",
            );
        }
        if precedence == 1 && name != "exempt" {
            self.invalid(
                "spec.matchingPrecedence",
                &p,
                "only the schema named 'exempt' may have matchingPrecedence 1",
            );
        }
        if let Some(m) = given(spec, "distinguisherMethod") {
            if !matches!(text(m, "type"), "ByUser" | "ByNamespace") {
                self.not_supported(
                    "spec.distinguisherMethod.type",
                    &m["type"],
                    &["ByNamespace", "ByUser"],
                );
            }
        }
        let level = spec
            .pointer("/priorityLevelConfiguration/name")
            .and_then(Value::as_str);
        match level {
            None | Some("") => self.required("spec.priorityLevelConfiguration.name", "must reference a priority level"),
            Some(l) if !is_dns_subdomain(l) => self.invalid(
                "spec.priorityLevelConfiguration.name",
                &Value::from(l),
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ),
            Some(_) => {}
        }
        for (i, rule) in list(spec, "rules").iter().enumerate() {
            self.rule(&format!("spec.rules[{i}]"), rule);
        }
    }

    fn rule(&mut self, path: &str, rule: &Value) {
        let subjects = list(rule, "subjects");
        if subjects.is_empty() {
            self.required(
                &format!("{path}.subjects"),
                "subjects must contain at least one value",
            );
        }
        for (i, s) in subjects.iter().enumerate() {
            self.subject(&format!("{path}.subjects[{i}]"), s);
        }
        let (resource, non_resource) =
            (list(rule, "resourceRules"), list(rule, "nonResourceRules"));
        if resource.is_empty() && non_resource.is_empty() {
            self.required(
                path,
                "at least one of resourceRules and nonResourceRules has to be non-empty",
            );
        }
        for (i, r) in resource.iter().enumerate() {
            self.resource_rule(&format!("{path}.resourceRules[{i}]"), r);
        }
        for (i, r) in non_resource.iter().enumerate() {
            let p = format!("{path}.nonResourceRules[{i}]");
            self.verbs(&p, r);
            let urls = list(r, "nonResourceURLs");
            if urls.is_empty() {
                self.required(
                    &format!("{p}.nonResourceURLs"),
                    "nonResourceURLs must contain at least one value",
                );
            } else if strs(urls).contains(&"*") {
                if urls.len() > 1 {
                    self.invalid(
                        &format!("{p}.nonResourceURLs"),
                        &r["nonResourceURLs"],
                        "if '*' is present, must not specify other non-resource URLs",
                    );
                }
            } else {
                for (j, u) in strs(urls).into_iter().enumerate() {
                    if let Some(msg) = url_problem(u) {
                        self.invalid(&format!("{p}.nonResourceURLs[{j}]"), &Value::from(u), msg);
                    }
                }
            }
        }
    }

    fn subject(&mut self, path: &str, s: &Value) {
        let members = [
            ("User", "user"),
            ("Group", "group"),
            ("ServiceAccount", "serviceAccount"),
        ];
        let kind = text(s, "kind");
        let Some((_, own)) = members.iter().find(|(k, _)| *k == kind) else {
            self.not_supported(
                &format!("{path}.kind"),
                &Value::from(kind),
                &["Group", "ServiceAccount", "User"],
            );
            return;
        };
        match given(s, own) {
            None => self.required(
                &format!("{path}.{own}"),
                &format!("{own} is required when subject kind is '{kind}'"),
            ),
            Some(m) => {
                if text(m, "name").is_empty() {
                    self.required(&format!("{path}.{own}.name"), "");
                }
                if kind == "ServiceAccount" && text(m, "namespace").is_empty() {
                    self.required(
                        &format!("{path}.{own}.namespace"),
                        "must specify namespace for service account",
                    );
                }
            }
        }
        for (k, field) in members {
            if field != *own && given(s, field).is_some() {
                self.forbidden(
                    &format!("{path}.{field}"),
                    &format!("{field} is forbidden when subject kind is not '{k}'"),
                );
            }
        }
    }

    fn verbs(&mut self, path: &str, r: &Value) {
        let verbs = strs(list(r, "verbs"));
        let p = format!("{path}.verbs");
        if verbs.is_empty() {
            self.required(&p, "verbs must contain at least one value");
        } else if verbs.contains(&"*") {
            if verbs.len() > 1 {
                self.invalid(
                    &p,
                    &r["verbs"],
                    "if '*' is present, must not specify other verbs",
                );
            }
        } else if verbs.iter().any(|v| !VERBS.contains(v)) {
            self.not_supported(&p, &r["verbs"], VERBS);
        }
    }

    fn resource_rule(&mut self, path: &str, r: &Value) {
        self.verbs(path, r);
        for (key, what) in [("apiGroups", "api group"), ("resources", "resource")] {
            let items = strs(list(r, key));
            if items.is_empty() {
                self.required(
                    &format!("{path}.{key}"),
                    &format!("resource rules must supply at least one {what}"),
                );
            } else if items.len() > 1 && items.contains(&"*") {
                self.invalid(
                    &format!("{path}.{key}"),
                    &r[key],
                    &format!("if '*' is present, must not specify other {what}s"),
                );
            }
        }
        let namespaces = strs(list(r, "namespaces"));
        let cluster = r
            .get("clusterScope")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if namespaces.is_empty() && !cluster {
            self.required(
                &format!("{path}.namespaces"),
                "resource rules that are not cluster scoped must supply at least one namespace",
            );
        } else if namespaces.contains(&"*") {
            if namespaces.len() > 1 {
                self.invalid(
                    &format!("{path}.namespaces"),
                    &r["namespaces"],
                    "if '*' is present, must not specify other namespaces",
                );
            }
        } else {
            for (i, ns) in namespaces.into_iter().enumerate() {
                if !is_dns_label(ns) {
                    self.invalid(
                        &format!("{path}.namespaces[{i}]"),
                        &Value::from(ns),
                        "each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                    );
                }
            }
        }
    }

    /// A mandatory object's spec is fixed (the `exempt` priority level's `spec.exempt` aside).
    fn mandatory(&mut self, kind: &str, name: &str, spec: &Value) {
        let Some(fixed) = bootstrap::mandatory(kind, name) else {
            return;
        };
        let mut have = spec.clone();
        let mut want = fixed["spec"].clone();
        let exempt_level = kind == "PriorityLevelConfiguration" && name == "exempt";
        if exempt_level {
            have["exempt"] = want["exempt"].clone();
        }
        if super::specs_equal(&have, &std::mem::take(&mut want)) {
            return;
        }
        let msg = if exempt_level {
            format!("spec of '{name}' except the 'spec.exempt' field must equal the fixed value")
        } else {
            format!("spec of '{name}' must equal the fixed value")
        };
        self.invalid("spec", spec, &msg);
    }

    fn conditions(&mut self, conditions: Option<&Value>) {
        let items = conditions
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let mut seen = Vec::new();
        for (i, c) in items.iter().enumerate() {
            let t = text(c, "type");
            if t.is_empty() {
                self.required(&format!("status.conditions[{i}].type"), "must not be empty");
            } else if seen.contains(&t) {
                self.0.push((
                    format!("status.conditions[{i}].type"),
                    format!("Duplicate value: {t:?}"),
                ));
            }
            seen.push(t);
        }
    }
}

/// `ValidateNonResourceURLPath`.
fn url_problem(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("must not be empty");
    }
    if path == "/" {
        return None;
    }
    if !path.starts_with('/') {
        return Some("must start with slash");
    }
    if path.contains(' ') {
        return Some("must not contain white-space");
    }
    if path.contains("//") {
        return Some("must not contain double slash");
    }
    let stars = path.matches('*').count();
    if stars > 1 || (stars == 1 && !path.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

fn is_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}
