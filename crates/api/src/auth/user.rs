//! Who is calling: the authenticated identity every authorization decision is made for.
//!
//! [`UserInfo`] mirrors Kubernetes' `user.Info` and serializes as `authentication.k8s.io`'s
//! `UserInfo` (`username`, `uid`, `groups`, `extra`), so a TokenReview or SubjectAccessReview
//! response can carry it as is. Group conventions are Kubernetes': every authenticated caller is in
//! `system:authenticated`, the anonymous one in `system:unauthenticated`, and members of
//! `system:masters` bypass authorization.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Members are allowed everything, without consulting RBAC.
pub const SYSTEM_MASTERS: &str = "system:masters";
/// Every authenticated caller.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The anonymous caller.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The anonymous caller's user name.
pub const ANONYMOUS: &str = "system:anonymous";
/// Every service account.
pub const SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// A service account's user name is this prefix, then `NAMESPACE:NAME`.
pub const SERVICE_ACCOUNT_USER_PREFIX: &str = "system:serviceaccount:";
/// The groups of a namespace's service accounts are this prefix, then the namespace.
pub const SERVICE_ACCOUNT_GROUP_PREFIX: &str = "system:serviceaccounts:";

/// An authenticated identity.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    /// The user name (`alice`, `system:serviceaccount:ns:sa`).
    #[serde(rename = "username", default)]
    pub name: String,
    /// A unique, stable id for the user, when the authenticator has one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
    /// The groups the user is in.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    /// Extra attributes from the authenticator (a token's credential id, its bound pod).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

// === impl UserInfo ===

impl UserInfo {
    /// An authenticated user named `name` in `groups`, plus `system:authenticated`.
    pub fn authenticated(name: impl Into<String>, groups: Vec<String>) -> Self {
        UserInfo {
            name: name.into(),
            groups,
            ..Default::default()
        }
        .with_authenticated_group()
    }

    /// The identity of a request without credentials (when anonymous access is enabled).
    pub fn anonymous() -> Self {
        UserInfo {
            name: ANONYMOUS.to_string(),
            groups: vec![UNAUTHENTICATED.to_string()],
            ..Default::default()
        }
    }

    /// A service account, with the groups Kubernetes gives it (`system:serviceaccounts`,
    /// `system:serviceaccounts:NS`, `system:authenticated`).
    pub fn service_account(namespace: &str, name: &str, uid: impl Into<String>) -> Self {
        UserInfo {
            name: service_account_username(namespace, name),
            uid: uid.into(),
            groups: vec![
                SERVICE_ACCOUNTS.to_string(),
                format!("{SERVICE_ACCOUNT_GROUP_PREFIX}{namespace}"),
            ],
            extra: BTreeMap::new(),
        }
        .with_authenticated_group()
    }

    /// Add `system:authenticated` unless present, as Kubernetes' authenticator chain does for
    /// everyone but the anonymous user.
    pub fn with_authenticated_group(mut self) -> Self {
        if self.name != ANONYMOUS && !self.in_group(AUTHENTICATED) {
            self.groups.push(AUTHENTICATED.to_string());
        }
        self
    }

    /// Is the user in `group`?
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// Does the user bypass authorization (member of `system:masters`)?
    pub fn is_privileged(&self) -> bool {
        self.in_group(SYSTEM_MASTERS)
    }

    /// `(namespace, name)` when this is a service account.
    pub fn service_account_name(&self) -> Option<(&str, &str)> {
        split_service_account_username(&self.name)
    }
}

/// `system:serviceaccount:NAMESPACE:NAME`.
pub fn service_account_username(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_USER_PREFIX}{namespace}:{name}")
}

/// `(namespace, name)` from a service account user name; `None` for any other name, including
/// ones with an empty or extra part.
pub fn split_service_account_username(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix(SERVICE_ACCOUNT_USER_PREFIX)?;
    let (namespace, name) = rest.split_once(':')?;
    let valid = !namespace.is_empty() && !name.is_empty() && !name.contains(':');
    valid.then_some((namespace, name))
}
