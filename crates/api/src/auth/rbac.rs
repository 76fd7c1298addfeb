//! RBAC authorization with Kubernetes' semantics and wording.
//!
//! [`authorize`] answers "may this user do this?" from the Roles, ClusterRoles, RoleBindings and
//! ClusterRoleBindings a [`PolicySource`] provides, the way kube-apiserver's RBAC authorizer does:
//!
//! 1. members of `system:masters` are allowed without consulting RBAC;
//! 2. every ClusterRoleBinding whose subjects include the user grants its role's rules
//!    everywhere;
//! 3. for a namespaced request, every RoleBinding *in that namespace* whose subjects include the
//!    user grants its Role's — or ClusterRole's — rules in that namespace only;
//! 4. the first rule that allows the request decides, and the reason names the binding, e.g.
//!    `RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "y" to User "z"`.
//!
//! Rules match with [`rule_allows`] (`*` in verbs, apiGroups, resources; `resource/subresource`
//! and `*/subresource`; resourceNames; nonResourceURLs with a trailing `*`). A ClusterRole with an
//! `aggregationRule` is resolved on the fly from the ClusterRoles its selectors match, recursively,
//! so no aggregation controller needs to have run. A denial's reason is empty unless a binding
//! pointed at a missing role, as in Kubernetes; [`forbidden_message`] gives the 403 text.
//!
//! [`escalation`] answers the other RBAC question: does a writer of a role or binding already
//! hold what it grants?

mod bindings;
pub mod escalation;
mod policy;
mod resolve;
mod rules;

pub use policy::{Policy, PolicyError, PolicySource};
pub use rules::rule_allows;

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::auth::user::UserInfo;

/// What is being asked, in Kubernetes' authorizer terms. Empty strings mean "not applicable".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`, or a
    /// special verb (`impersonate`, `bind`, `escalate`, `use`); for non-resource requests the
    /// lower-cased HTTP method.
    pub verb: String,
    /// The API group (`""` for core).
    pub api_group: String,
    /// The resource (plural, lower case).
    pub resource: String,
    /// The subresource (`status`, `scale`, `log`).
    pub subresource: String,
    /// The namespace; for a request on a namespace object itself, that namespace.
    pub namespace: String,
    /// The object's name, when the request names one.
    pub name: String,
    /// The URL path of a non-resource request (`/healthz`).
    pub path: String,
    /// Is this a request for an API resource (rather than a non-resource URL)?
    pub resource_request: bool,
}

// === impl Attributes ===

impl Attributes {
    /// A request for `resource` in `api_group`, cluster-wide and unnamed until refined.
    pub fn resource(
        user: UserInfo,
        verb: impl Into<String>,
        api_group: impl Into<String>,
        resource: impl Into<String>,
    ) -> Self {
        Attributes {
            user,
            verb: verb.into(),
            api_group: api_group.into(),
            resource: resource.into(),
            resource_request: true,
            ..Default::default()
        }
    }

    /// A request for a non-resource URL such as `/version`.
    pub fn non_resource(user: UserInfo, verb: impl Into<String>, path: impl Into<String>) -> Self {
        Attributes {
            user,
            verb: verb.into(),
            path: path.into(),
            resource_request: false,
            ..Default::default()
        }
    }

    /// In `namespace`.
    pub fn in_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// On the object `name`.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// On `subresource` of the object.
    pub fn subresource(mut self, subresource: impl Into<String>) -> Self {
        self.subresource = subresource.into();
        self
    }
}

/// The outcome, with the reason Kubernetes would give (for audit logs and access reviews).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed.
    Allow {
        /// Which binding allowed it.
        reason: String,
    },
    /// Not allowed by any rule.
    Deny {
        /// Empty, or `RBAC: …` naming bindings whose roles could not be found.
        reason: String,
    },
}

impl Decision {
    /// Was the request allowed?
    pub fn is_allowed(&self) -> bool {
        matches!(self, Decision::Allow { .. })
    }

    /// The reason text.
    pub fn reason(&self) -> &str {
        match self {
            Decision::Allow { reason } | Decision::Deny { reason } => reason,
        }
    }
}

/// May `attrs.user` do what `attrs` describes under `policy`?
pub fn authorize(attrs: &Attributes, policy: &impl PolicySource) -> Decision {
    if attrs.user.is_privileged() {
        return Decision::Allow {
            reason: format!(
                "allowed by membership in group \"{}\"",
                crate::auth::user::SYSTEM_MASTERS
            ),
        };
    }
    let mut errors: Vec<String> = Vec::new();
    let found =
        resolve::visit_rules(
            policy,
            &attrs.user,
            &attrs.namespace,
            |source, rules| match rules {
                Ok(rules) => rules.iter().any(|r| rule_allows(attrs, r)).then(source),
                Err(e) => {
                    errors.push(e);
                    None
                }
            },
        );
    if let Some(source) = found {
        return Decision::Allow {
            reason: format!("RBAC: allowed by {source}"),
        };
    }
    let mut seen = std::collections::HashSet::new();
    errors.retain(|e| seen.insert(e.clone()));
    let reason = match errors.len() {
        0 => String::new(),
        1 => format!("RBAC: {}", errors[0]),
        _ => format!("RBAC: [{}]", errors.join(", ")),
    };
    Decision::Deny { reason }
}

/// Every rule granted to `user` in `namespace` (cluster-wide grants included; none but those
/// for an empty namespace), with the errors met on the way: what a SelfSubjectRulesReview
/// reports. `system:masters` gets the single rule that allows everything.
pub fn rules_for(
    user: &UserInfo,
    namespace: &str,
    policy: &impl PolicySource,
) -> (Vec<PolicyRule>, Vec<String>) {
    if user.is_privileged() {
        let all = || Some(vec!["*".to_string()]);
        let everything = PolicyRule {
            verbs: vec!["*".to_string()],
            api_groups: all(),
            resources: all(),
            ..Default::default()
        };
        let urls = PolicyRule {
            verbs: vec!["*".to_string()],
            non_resource_urls: all(),
            ..Default::default()
        };
        return (vec![everything, urls], Vec::new());
    }
    let (mut rules, mut errors) = (Vec::<PolicyRule>::new(), Vec::new());
    resolve::visit_rules(policy, user, namespace, |_, found| -> Option<()> {
        match found {
            Ok(found) => {
                for r in found {
                    if !rules.contains(r) {
                        rules.push(r.clone());
                    }
                }
            }
            Err(e) => errors.push(e),
        }
        None
    });
    (rules, errors)
}

/// The sentence kube-apiserver puts in a 403: `User "alice" cannot list resource "secrets" in
/// API group "" in the namespace "ns1"`.
pub fn forbidden_message(attrs: &Attributes) -> String {
    let user = &attrs.user.name;
    let verb = &attrs.verb;
    if !attrs.resource_request {
        return format!("User {user:?} cannot {verb} path {:?}", attrs.path);
    }
    let mut resource = attrs.resource.clone();
    if !attrs.subresource.is_empty() {
        resource = format!("{resource}/{}", attrs.subresource);
    }
    let group = &attrs.api_group;
    if attrs.namespace.is_empty() {
        format!(
            "User {user:?} cannot {verb} resource {resource:?} in API group {group:?} at the \
             cluster scope"
        )
    } else {
        format!(
            "User {user:?} cannot {verb} resource {resource:?} in API group {group:?} in the \
             namespace {:?}",
            attrs.namespace
        )
    }
}

/// The whole `message` of the 403 `Status`, as `apierrors.NewForbidden` words it:
/// `secrets "db" is forbidden: User … in the namespace "ns1"` plus `: reason` when the
/// decision has one.
pub fn forbidden_status_message(attrs: &Attributes, reason: &str) -> String {
    let mut err = forbidden_message(attrs);
    if !reason.is_empty() {
        err = format!("{err}: {reason}");
    }
    let qualified = match (attrs.resource.as_str(), attrs.api_group.as_str()) {
        ("", "") => return format!("forbidden: {err}"),
        (resource, "") => resource.to_string(),
        (resource, group) => format!("{resource}.{group}"),
    };
    if attrs.name.is_empty() {
        format!("{qualified} is forbidden: {err}")
    } else {
        format!("{qualified} {:?} is forbidden: {err}", attrs.name)
    }
}
