//! Privilege escalation: does a writer already hold every permission a role or binding would
//! grant? (kube-apiserver's `ConfirmNoEscalation`, `Covers`, `CompactRules`, `CompactString`.)
//!
//! The granted rules are broken down into atoms — one API group, resource, verb and resource
//! name, or one non-resource URL and verb — and each atom must be covered by a single rule the
//! writer holds. What is left over is what the writer lacks; it is compacted (atoms differing
//! only by verb merge again) and printed as kube-apiserver prints it, so a refusal reads the
//! same on the hub as on a Kubernetes cluster.
//!
//! The decision of *whether* to check — the `escalate` and `bind` verbs, `system:masters` —
//! belongs to the caller (`access/escalation.rs`); this module only compares rules.

use k8s_openapi::api::rbac::v1::{PolicyRule, RoleRef};

use super::{resolve, rules_for, PolicySource};
use crate::auth::user::UserInfo;

const ALL: &str = "*";

/// The rules of everything: what an `aggregationRule` needs, since it may gather any rule.
pub fn full_authority() -> Vec<PolicyRule> {
    let all = || Some(vec![ALL.to_string()]);
    vec![
        PolicyRule {
            verbs: vec![ALL.to_string()],
            api_groups: all(),
            resources: all(),
            ..Default::default()
        },
        PolicyRule {
            verbs: vec![ALL.to_string()],
            non_resource_urls: all(),
            ..Default::default()
        },
    ]
}

/// Why the rules a binding's `roleRef` grants cannot be known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleRefError {
    /// The Role (in the binding's namespace) or ClusterRole does not exist.
    NotFound {
        /// `role` or `clusterrole`, as kube-apiserver's listers name them in the 404.
        resource: &'static str,
        /// The role's name.
        name: String,
    },
    /// `roleRef.kind` is neither `Role` nor `ClusterRole`.
    UnsupportedKind(String),
}

/// The rules `role_ref` grants in `binding_ns` ("" for a ClusterRoleBinding): a Role of that
/// namespace, or a ClusterRole with its aggregation resolved as the authorizer resolves it.
pub fn bound_rules(
    policy: &impl PolicySource,
    role_ref: &RoleRef,
    binding_ns: &str,
) -> Result<Vec<PolicyRule>, RoleRefError> {
    let not_found = |resource| RoleRefError::NotFound {
        resource,
        name: role_ref.name.clone(),
    };
    match role_ref.kind.as_str() {
        "Role" => policy
            .role(binding_ns, &role_ref.name)
            .map(|r| r.rules.clone().unwrap_or_default())
            .ok_or_else(|| not_found("role")),
        "ClusterRole" => policy
            .cluster_role(&role_ref.name)
            .map(|r| {
                resolve::cluster_role_rules(policy, r)
                    .into_iter()
                    .cloned()
                    .collect()
            })
            .ok_or_else(|| not_found("clusterrole")),
        other => Err(RoleRefError::UnsupportedKind(other.to_string())),
    }
}

/// `Ok` when `user` holds, in `namespace` ("" for cluster-wide grants only), every permission
/// `rules` grant; otherwise kube-apiserver's explanation: `user "u" (groups=[…]) is attempting
/// to grant RBAC permissions not currently held:` and each missing rule on its own line.
pub fn confirm_no_escalation(
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
    policy: &impl PolicySource,
) -> Result<(), String> {
    let (held, errors) = rules_for(user, namespace, policy);
    let missing = uncovered(&held, rules);
    if missing.is_empty() {
        return Ok(());
    }
    let mut lines: Vec<String> = compact(missing).iter().map(compact_string).collect();
    lines.sort();
    lines.dedup();
    let mut msg = format!(
        "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        user.name,
        go_quoted(&user.groups),
        lines.join("\n")
    );
    if !errors.is_empty() {
        msg.push_str(&format!("; resolution errors: [{}]", errors.join(" ")));
    }
    Err(msg)
}

/// The atoms of `servant` that no rule of `owner` covers (empty: `owner` covers it all).
pub fn uncovered(owner: &[PolicyRule], servant: &[PolicyRule]) -> Vec<PolicyRule> {
    servant
        .iter()
        .flat_map(breakdown)
        .filter(|atom| !owner.iter().any(|o| covers(o, atom)))
        .collect()
}

fn list(v: &Option<Vec<String>>) -> &[String] {
    v.as_deref().unwrap_or_default()
}

fn one(s: &str) -> Option<Vec<String>> {
    Some(vec![s.to_string()])
}

/// `rule` as atoms with at most one group, resource, verb and resource name — or one
/// non-resource URL and verb. A rule with no groups or no resources has no resource atoms.
pub fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut atoms = Vec::new();
    for group in list(&rule.api_groups) {
        for resource in list(&rule.resources) {
            for verb in &rule.verbs {
                let atom = |names| PolicyRule {
                    api_groups: one(group),
                    resources: one(resource),
                    verbs: vec![verb.clone()],
                    resource_names: names,
                    ..Default::default()
                };
                match list(&rule.resource_names) {
                    [] => atoms.push(atom(None)),
                    names => atoms.extend(names.iter().map(|n| atom(one(n)))),
                }
            }
        }
    }
    for url in list(&rule.non_resource_urls) {
        for verb in &rule.verbs {
            atoms.push(PolicyRule {
                non_resource_urls: one(url),
                verbs: vec![verb.clone()],
                ..Default::default()
            });
        }
    }
    atoms
}

fn has(set: &[String], s: &str) -> bool {
    set.iter().any(|x| x == s)
}

fn has_all(set: &[String], wanted: &[String]) -> bool {
    wanted.iter().all(|w| has(set, w))
}

/// Does `owner` cover the atom `sub`? `*` covers every verb, group and resource; `*/status`
/// covers every resource's status; an owner without resourceNames covers every name, one with
/// them only those names (and never an atom without one); URLs match exactly or by a trailing
/// `*`.
fn covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, ALL) || has_all(&owner.verbs, &sub.verbs);
    let groups = has(list(&owner.api_groups), ALL)
        || has_all(list(&owner.api_groups), list(&sub.api_groups));
    let resources = resources_cover(list(&owner.resources), list(&sub.resources));
    let urls = list(&sub.non_resource_urls).iter().all(|u| {
        list(&owner.non_resource_urls)
            .iter()
            .any(|o| url_covers(o, u))
    });
    let names = match (list(&owner.resource_names), list(&sub.resource_names)) {
        ([], _) => true,
        (_, []) => false,
        (held, wanted) => has_all(held, wanted),
    };
    verbs && groups && resources && urls && names
}

fn resources_cover(owner: &[String], wanted: &[String]) -> bool {
    if has(owner, ALL) {
        return true;
    }
    wanted.iter().all(|r| {
        has(owner, r)
            || r.split_once('/')
                .is_some_and(|(_, sub)| has(owner, &format!("*/{sub}")))
    })
}

fn url_covers(owner: &str, path: &str) -> bool {
    owner == path
        || owner
            .strip_suffix('*')
            .is_some_and(|prefix| path.starts_with(prefix))
}

/// Merge rules that name one group and one resource and nothing but verbs, when they differ only
/// by verb (how the atoms of a refusal are shown). Others are kept as they are.
pub fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out: Vec<PolicyRule> = Vec::with_capacity(rules.len());
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = list(&rule.api_groups).len() == 1
            && list(&rule.resources).len() == 1
            && list(&rule.resource_names).is_empty()
            && list(&rule.non_resource_urls).is_empty();
        if !is_simple {
            out.push(rule);
            continue;
        }
        match simple
            .iter_mut()
            .find(|s| s.api_groups == rule.api_groups && s.resources == rule.resources)
        {
            Some(s) => s.verbs.extend(rule.verbs),
            None => simple.push(rule),
        }
    }
    out.extend(simple);
    out
}

/// `{APIGroups:["apps"], Resources:["deployments"], Verbs:["get" "list"]}`, as Kubernetes
/// prints a rule in escalation errors (Go's `%q` of each list).
pub fn compact_string(rule: &PolicyRule) -> String {
    let mut parts = Vec::new();
    for (label, values) in [
        ("APIGroups", list(&rule.api_groups)),
        ("Resources", list(&rule.resources)),
        ("NonResourceURLs", list(&rule.non_resource_urls)),
        ("ResourceNames", list(&rule.resource_names)),
        ("Verbs", rule.verbs.as_slice()),
    ] {
        if !values.is_empty() {
            parts.push(format!("{label}:{}", go_quoted(values)));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
fn go_quoted(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

#[cfg(test)]
mod tests;
