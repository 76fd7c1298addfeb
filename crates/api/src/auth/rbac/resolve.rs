//! From a user to the rules that apply to them: bindings whose subjects include the user, the
//! roles those bindings refer to, and ClusterRole aggregation (`rule.go`'s `VisitRulesFor`).

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::PolicySource;
use crate::auth::user::{UserInfo, SERVICE_ACCOUNT_USER_PREFIX};
use crate::selector::LabelSelector;

/// A role's rules, or why they could not be found.
pub(super) type Rules<'p> = Result<Vec<&'p PolicyRule>, String>;

/// Call `visit` with a lazy description and the rules of every binding that applies to `user`:
/// ClusterRoleBindings first, then the RoleBindings of `namespace` (when not empty). Stops at
/// the first `Some` the visitor returns.
pub(super) fn visit_rules<'p, P: PolicySource, T>(
    policy: &'p P,
    user: &UserInfo,
    namespace: &str,
    mut visit: impl FnMut(&dyn Fn() -> String, Rules<'p>) -> Option<T>,
) -> Option<T> {
    for binding in policy.cluster_role_bindings(user) {
        let Some(subject) = applies_to(user, binding.subjects.as_deref(), "") else {
            continue;
        };
        let describe = || {
            format!(
                "ClusterRoleBinding {:?} of {} {:?} to {}",
                name(&binding.metadata),
                binding.role_ref.kind,
                binding.role_ref.name,
                describe_subject(subject, "")
            )
        };
        if let Some(t) = visit(&describe, role_ref_rules(policy, &binding.role_ref, "")) {
            return Some(t);
        }
    }
    if namespace.is_empty() {
        return None;
    }
    for binding in policy.role_bindings(namespace, user) {
        let binding_ns = binding.metadata.namespace.as_deref().unwrap_or(namespace);
        let Some(subject) = applies_to(user, binding.subjects.as_deref(), binding_ns) else {
            continue;
        };
        let describe = || {
            format!(
                "RoleBinding {:?} of {} {:?} to {}",
                format!("{}/{binding_ns}", name(&binding.metadata)),
                binding.role_ref.kind,
                binding.role_ref.name,
                describe_subject(subject, binding_ns)
            )
        };
        if let Some(t) = visit(
            &describe,
            role_ref_rules(policy, &binding.role_ref, binding_ns),
        ) {
            return Some(t);
        }
    }
    None
}

fn name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

/// The first subject that is `user`. A ServiceAccount subject without a namespace means the
/// binding's namespace (none for ClusterRoleBindings, where it then matches nobody).
fn applies_to<'s>(
    user: &UserInfo,
    subjects: Option<&'s [Subject]>,
    binding_ns: &str,
) -> Option<&'s Subject> {
    subjects
        .unwrap_or_default()
        .iter()
        .find(|s| match s.kind.as_str() {
            "User" => user.name == s.name,
            "Group" => user.in_group(&s.name),
            "ServiceAccount" => {
                let ns = match s.namespace.as_deref() {
                    Some(ns) if !ns.is_empty() => ns,
                    _ => binding_ns,
                };
                !ns.is_empty() && is_service_account(&user.name, ns, &s.name)
            }
            _ => false,
        })
}

/// Whether `user` is the name of service account `namespace/name` (as
/// [`service_account_username`](crate::auth::user::service_account_username) would write it,
/// without writing it: this runs for every ServiceAccount subject of the bindings a request
/// looks at).
fn is_service_account(user: &str, namespace: &str, name: &str) -> bool {
    user.strip_prefix(SERVICE_ACCOUNT_USER_PREFIX)
        .and_then(|rest| rest.strip_prefix(namespace))
        .and_then(|rest| rest.strip_prefix(':'))
        == Some(name)
}

/// `User "alice"`, `Group "devs"`, `ServiceAccount "builder/ci"` (name/namespace).
fn describe_subject(s: &Subject, binding_ns: &str) -> String {
    match s.kind.as_str() {
        "ServiceAccount" => {
            let ns = match s.namespace.as_deref() {
                Some(ns) if !ns.is_empty() => ns,
                _ => binding_ns,
            };
            format!("{} {:?}", s.kind, format!("{}/{ns}", s.name))
        }
        _ => format!("{} {:?}", s.kind, s.name),
    }
}

/// The rules a binding's roleRef grants: a Role in the binding's namespace, or a ClusterRole.
fn role_ref_rules<'p, P: PolicySource>(
    policy: &'p P,
    role_ref: &RoleRef,
    binding_ns: &str,
) -> Rules<'p> {
    match role_ref.kind.as_str() {
        "Role" => policy
            .role(binding_ns, &role_ref.name)
            .map(|r| r.rules.iter().flatten().collect())
            .ok_or_else(|| {
                format!(
                    "role.rbac.authorization.k8s.io {:?} not found",
                    role_ref.name
                )
            }),
        "ClusterRole" => policy
            .cluster_role(&role_ref.name)
            .map(|r| cluster_role_rules(policy, r))
            .ok_or_else(|| {
                format!(
                    "clusterrole.rbac.authorization.k8s.io {:?} not found",
                    role_ref.name
                )
            }),
        other => Err(format!("unsupported role reference kind: {other:?}")),
    }
}

/// A ClusterRole's effective rules. With an `aggregationRule`, they are the union of the rules
/// of every other ClusterRole matched by any of its selectors, resolved recursively (what the
/// aggregation controller converges to); the role's own stored rules are ignored, as that
/// controller overwrites them. Duplicates are dropped, order is kept.
pub(super) fn cluster_role_rules<'p, P: PolicySource>(
    policy: &'p P,
    role: &'p ClusterRole,
) -> Vec<&'p PolicyRule> {
    let mut out = Vec::new();
    collect(policy, role, &mut out, &mut HashSet::new());
    let mut unique: Vec<&PolicyRule> = Vec::with_capacity(out.len());
    for r in out {
        if !unique.contains(&r) {
            unique.push(r);
        }
    }
    unique
}

fn collect<'p, P: PolicySource>(
    policy: &'p P,
    role: &'p ClusterRole,
    out: &mut Vec<&'p PolicyRule>,
    visited: &mut HashSet<&'p str>,
) {
    let own = name(&role.metadata);
    if !visited.insert(own) {
        return;
    }
    let Some(aggregation) = &role.aggregation_rule else {
        out.extend(role.rules.iter().flatten());
        return;
    };
    // An invalid selector selects nothing, as the controller skips a role it cannot resolve.
    let selectors: Vec<LabelSelector> = aggregation
        .cluster_role_selectors
        .iter()
        .flatten()
        .filter_map(|s| LabelSelector::from_metav1(s).ok())
        .collect();
    let no_labels = BTreeMap::new();
    for other in policy.cluster_roles() {
        if name(&other.metadata) == own {
            continue;
        }
        let labels = other.metadata.labels.as_ref().unwrap_or(&no_labels);
        if selectors.iter().any(|s| s.matches(labels)) {
            collect(policy, other, out, visited);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_service_account;
    use crate::auth::user::service_account_username;

    #[test]
    fn service_account_names_compare_as_written() {
        let users = [
            "system:serviceaccount:ns:sa",
            "system:serviceaccount:a:b:c",
            "system:serviceaccount:ns:",
            "system:serviceaccount:nsx:sa",
            "system:serviceaccounts:ns:sa",
            "alice",
        ];
        let accounts = [
            ("ns", "sa"),
            ("a", "b:c"),
            ("a:b", "c"),
            ("ns", ""),
            ("n", "s:sa"),
        ];
        for user in users {
            for (ns, name) in accounts {
                assert_eq!(
                    is_service_account(user, ns, name),
                    user == service_account_username(ns, name),
                    "{user} vs {ns}/{name}"
                );
            }
        }
    }
}
