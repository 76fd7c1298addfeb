//! RBAC: does any binding grant this user this request? Evaluated the way Kubernetes does —
//! ClusterRoleBindings grant everywhere, RoleBindings grant in their namespace (also when they
//! refer to a ClusterRole), rules match verbs, API groups, resources (`res/sub`, `*/sub`, `*`),
//! resource names and non-resource URLs (with a trailing `*`), and aggregated ClusterRoles take
//! the rules of the roles their selectors match.

use serde_json::Value;

use crate::access::User;

/// What is asked.
#[derive(Debug, Clone, Default)]
pub struct Attributes<'a> {
    /// Verb.
    pub verb: &'a str,
    /// API group.
    pub group: &'a str,
    /// Plural resource ("" for non-resource requests).
    pub resource: &'a str,
    /// Subresource.
    pub subresource: Option<&'a str>,
    /// Namespace.
    pub namespace: Option<&'a str>,
    /// Object name.
    pub name: Option<&'a str>,
    /// Path, for non-resource requests.
    pub path: &'a str,
    /// Is it a resource request?
    pub resource_request: bool,
}

/// Where roles and bindings come from.
pub trait Policy {
    /// Every ClusterRoleBinding.
    fn cluster_role_bindings(&self) -> Vec<Value>;
    /// RoleBindings of a namespace.
    fn role_bindings(&self, namespace: &str) -> Vec<Value>;
    /// A ClusterRole by name.
    fn cluster_role(&self, name: &str) -> Option<Value>;
    /// Every ClusterRole (for aggregation).
    fn cluster_roles(&self) -> Vec<Value>;
    /// A Role by namespace and name.
    fn role(&self, namespace: &str, name: &str) -> Option<Value>;
}

fn strs(v: &Value) -> impl Iterator<Item = &str> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str)
}

fn subject_matches(s: &Value, user: &User, binding_ns: Option<&str>) -> bool {
    let name = s["name"].as_str().unwrap_or("");
    match s["kind"].as_str() {
        Some("User") => user.name == name,
        Some("Group") => user.groups.iter().any(|g| g == name),
        Some("ServiceAccount") => {
            let ns = s["namespace"].as_str().or(binding_ns).unwrap_or("");
            user.name == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

fn rule_allows(rule: &Value, a: &Attributes<'_>) -> bool {
    let verb_ok = strs(&rule["verbs"]).any(|v| v == "*" || v == a.verb);
    if !verb_ok {
        return false;
    }
    if !a.resource_request {
        return strs(&rule["nonResourceURLs"]).any(|u| {
            u == "*" || u == a.path || (u.ends_with('*') && a.path.starts_with(&u[..u.len() - 1]))
        });
    }
    let group_ok = strs(&rule["apiGroups"]).any(|g| g == "*" || g == a.group);
    let full = match a.subresource {
        Some(sub) => format!("{}/{sub}", a.resource),
        None => a.resource.to_string(),
    };
    let resource_ok = strs(&rule["resources"]).any(|r| {
        r == "*"
            || r == full
            || (a.subresource.is_some() && r == format!("*/{}", a.subresource.unwrap_or("")))
    });
    if !group_ok || !resource_ok {
        return false;
    }
    let names: Vec<&str> = strs(&rule["resourceNames"]).collect();
    names.is_empty() || a.name.is_some_and(|n| names.contains(&n))
}

fn labels_match(selector: &Value, labels: &Value) -> bool {
    selector["matchLabels"]
        .as_object()
        .is_none_or(|m| m.iter().all(|(k, v)| labels.get(k) == Some(v)))
}

/// Rules of a ClusterRole, with aggregation resolved.
fn cluster_role_rules(policy: &dyn Policy, role: &Value) -> Vec<Value> {
    let mut rules: Vec<Value> = role["rules"].as_array().cloned().unwrap_or_default();
    if let Some(selectors) = role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
    {
        for other in policy.cluster_roles() {
            if other["metadata"]["name"] == role["metadata"]["name"] {
                continue;
            }
            let labels = other
                .pointer("/metadata/labels")
                .cloned()
                .unwrap_or(Value::Null);
            if selectors.iter().any(|s| labels_match(s, &labels)) {
                rules.extend(other["rules"].as_array().cloned().unwrap_or_default());
            }
        }
    }
    rules
}

/// Allowed (with the reason) or denied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed.
    Allow(String),
    /// No rule allows it.
    Deny,
}

/// Decide.
pub fn authorize(policy: &dyn Policy, user: &User, a: &Attributes<'_>) -> Decision {
    for b in policy.cluster_role_bindings() {
        if !strs_obj(&b["subjects"]).any(|s| subject_matches(s, user, None)) {
            continue;
        }
        let role_name = b
            .pointer("/roleRef/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(role) = policy.cluster_role(role_name) {
            if cluster_role_rules(policy, &role)
                .iter()
                .any(|r| rule_allows(r, a))
            {
                return Decision::Allow(format!(
                    "RBAC: allowed by ClusterRoleBinding {:?} of ClusterRole {role_name:?} to {}",
                    b["metadata"]["name"].as_str().unwrap_or(""),
                    user.name
                ));
            }
        }
    }
    let Some(ns) = a.namespace else {
        return Decision::Deny;
    };
    for b in policy.role_bindings(ns) {
        if !strs_obj(&b["subjects"]).any(|s| subject_matches(s, user, Some(ns))) {
            continue;
        }
        let role_name = b
            .pointer("/roleRef/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let rules = match b.pointer("/roleRef/kind").and_then(Value::as_str) {
            Some("ClusterRole") => policy
                .cluster_role(role_name)
                .map(|r| cluster_role_rules(policy, &r)),
            _ => policy
                .role(ns, role_name)
                .map(|r| r["rules"].as_array().cloned().unwrap_or_default()),
        };
        if rules.unwrap_or_default().iter().any(|r| rule_allows(r, a)) {
            return Decision::Allow(format!(
                "RBAC: allowed by RoleBinding {:?} of {role_name:?} to {}",
                b["metadata"]["name"].as_str().unwrap_or(""),
                user.name
            ));
        }
    }
    Decision::Deny
}

fn strs_obj(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

/// The 403 message Kubernetes prints.
pub fn forbidden_message(user: &User, a: &Attributes<'_>) -> String {
    if !a.resource_request {
        return format!(
            "forbidden: User {:?} cannot {} path {:?}",
            user.name, a.verb, a.path
        );
    }
    let res = match a.subresource {
        Some(s) => format!("{}/{s}", a.resource),
        None => a.resource.to_string(),
    };
    let scope = match a.namespace {
        Some(ns) => format!(" in the namespace {ns:?}"),
        None => " at the cluster scope".to_string(),
    };
    let what = match a.name {
        Some(n) => format!("{} {:?}", a.resource, n),
        None => a.resource.to_string(),
    };
    format!(
        "{what} is forbidden: User {:?} cannot {} resource {res:?} in API group {:?}{scope}",
        user.name, a.verb, a.group
    )
}

#[cfg(test)]
mod tests;
