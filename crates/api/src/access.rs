//! Who is calling and may they: bearer-token authentication and RBAC authorization for every
//! request.
//!
//! The admin token (written to `admin.kubeconfig`) maps to a `system:masters` user, which is
//! always allowed; service-account tokens map to `system:serviceaccount:NS:NAME` and are
//! evaluated with RBAC against the roles and bindings stored in the hub.

use http::HeaderValue;
use serde_json::Value;

use crate::authz::rbac::{self, Attributes, Decision, Policy};
use crate::authz::tokens::Signer;
use crate::cache::Cache;
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
    /// Issues and verifies service-account tokens.
    pub signer: Signer,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("signer", &self.signer)
            .finish_non_exhaustive()
    }
}

struct CachePolicy<'a>(&'a Cache);

impl CachePolicy<'_> {
    fn values(&self, prefix: &str) -> Vec<Value> {
        self.0
            .list(prefix, None, None, |_| true)
            .0
            .iter()
            .map(|o| o.value())
            .collect()
    }
}

impl Policy for CachePolicy<'_> {
    fn cluster_role_bindings(&self) -> Vec<Value> {
        self.values("/registry/rbac.authorization.k8s.io/clusterrolebindings/")
    }
    fn role_bindings(&self, ns: &str) -> Vec<Value> {
        self.values(&format!(
            "/registry/rbac.authorization.k8s.io/rolebindings/{ns}/"
        ))
    }
    fn cluster_role(&self, name: &str) -> Option<Value> {
        self.0
            .get(&format!(
                "/registry/rbac.authorization.k8s.io/clusterroles/{name}"
            ))
            .map(|o| o.value())
    }
    fn cluster_roles(&self) -> Vec<Value> {
        self.values("/registry/rbac.authorization.k8s.io/clusterroles/")
    }
    fn role(&self, ns: &str, name: &str) -> Option<Value> {
        self.0
            .get(&format!(
                "/registry/rbac.authorization.k8s.io/roles/{ns}/{name}"
            ))
            .map(|o| o.value())
    }
}

impl Access {
    /// Accept `admin_token` as the cluster-admin credential; sign service-account tokens with
    /// `signer`.
    pub fn new(admin_token: String, signer: Signer) -> Access {
        Access {
            admin_token,
            signer,
        }
    }

    /// Who sent this `Authorization` header. Requests without a valid credential get 401.
    pub async fn authenticate(
        &self,
        cache: &Cache,
        authorization: Option<&HeaderValue>,
    ) -> Result<User> {
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
        let now = chrono::Utc::now().timestamp();
        let claims = self.signer.verify(token, &[], now).map_err(|e| {
            tracing::debug!(reason = %e, "bearer token refused");
            ApiError::unauthorized()
        })?;
        // A token dies with its service account (same name but a new uid is another account).
        let k = &claims.kubernetes;
        let sa = cache.get(&format!(
            "/registry/core/serviceaccounts/{}/{}",
            k.namespace, k.serviceaccount.name
        ));
        let uid_ok = sa.is_some_and(|o| {
            o.value().pointer("/metadata/uid").and_then(Value::as_str)
                == Some(k.serviceaccount.uid.as_str())
        });
        if !uid_ok {
            return Err(ApiError::unauthorized());
        }
        Ok(User {
            name: claims.sub,
            groups: vec![
                "system:serviceaccounts".into(),
                format!("system:serviceaccounts:{}", k.namespace),
                "system:authenticated".into(),
            ],
        })
    }

    /// May `user` do what `info` asks? 403 with Kubernetes' wording when not.
    pub async fn authorize(&self, cache: &Cache, user: &User, info: &RequestInfo) -> Result<()> {
        if user.groups.iter().any(|g| g == "system:masters") {
            return Ok(());
        }
        let verb = if info.is_resource_request {
            info.verb.as_str()
        } else {
            "get"
        };
        let attrs = Attributes {
            verb,
            group: &info.group,
            resource: &info.resource,
            subresource: info.subresource.as_deref(),
            namespace: info.namespace.as_deref(),
            name: info.name.as_deref(),
            path: &info.path,
            resource_request: info.is_resource_request,
        };
        match rbac::authorize(&CachePolicy(cache), user, &attrs) {
            Decision::Allow(reason) => {
                tracing::trace!(%reason, "allowed");
                Ok(())
            }
            Decision::Deny => Err(ApiError::forbidden(rbac::forbidden_message(user, &attrs))),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
