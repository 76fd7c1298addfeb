//! Who is calling and may they: bearer-token authentication and authorization for every request.
//!
//! The admin token (written to `admin.kubeconfig`) maps to a `system:masters` user, which is
//! always allowed; other credentials are evaluated with RBAC.

use http::HeaderValue;

use crate::error::{ApiError, Result};
use crate::request::RequestInfo;

/// An authenticated caller.
#[derive(Clone, PartialEq, Eq)]
pub struct User {
    /// User name.
    pub name: String,
    /// Groups.
    pub groups: Vec<String>,
}

impl std::fmt::Debug for User {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("User")
            .field("name", &self.name)
            .field("groups", &self.groups)
            .finish()
    }
}

/// Authentication and authorization.
pub struct Access {
    admin_token: String,
}

impl Access {
    /// Accept `admin_token` as the cluster-admin credential.
    pub fn new(admin_token: String) -> Access {
        Access { admin_token }
    }

    /// Who sent these headers. Requests without a valid credential get 401.
    pub async fn authenticate(&self, authorization: Option<&HeaderValue>) -> Result<User> {
        let token = authorization
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(ApiError::unauthorized)?;
        if constant_time_eq(token.as_bytes(), self.admin_token.as_bytes()) {
            return Ok(User {
                name: "flotilla-admin".into(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
            });
        }
        Err(ApiError::unauthorized())
    }

    /// May `user` do what `info` asks? 403 with Kubernetes' wording when not.
    pub async fn authorize(&self, user: &User, info: &RequestInfo) -> Result<()> {
        if user.groups.iter().any(|g| g == "system:masters") {
            return Ok(());
        }
        Err(ApiError::forbidden(format!(
            "User \"{}\" cannot {} resource \"{}\" in API group \"{}\"",
            user.name, info.verb, info.resource, info.group
        )))
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
