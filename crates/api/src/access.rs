//! Who is calling and may they: the server side of authentication and authorization.
//!
//! The decisions are made by [`crate::auth`], a pure library; this module feeds it what only the
//! server has — the `Authorization` header, the clock, the objects in the watch cache — and turns
//! its answers into `Status` errors (401 `Unauthorized`, 403 `Forbidden` in Kubernetes' words).
//!
//! - The admin token (written to `admin.kubeconfig`) authenticates as a member of
//!   `system:masters`, which is always allowed. Only its digest is held ([`AdminToken`]).
//! - Service-account tokens are ES256 JWTs issued through TokenRequest and verified by the hub's
//!   [`TokenAuthority`], whose key [`signing_key`] keeps in the data directory. A token dies with
//!   its service account, and with the object it is bound to: both must still exist with the uids
//!   the token names.
//! - Bootstrap tokens (`<id>.<secret>`, kubeadm's form) are checked against their Secret in
//!   `flotilla-system` ([`crate::auth::bootstrap_token`]); they authenticate as
//!   `system:bootstrap:<id>`, which may only ask to join (`access/join.rs`, before RBAC).
//! - RBAC is evaluated against a snapshot of the Roles, ClusterRoles and bindings in the watch
//!   cache, rebuilt whenever one of them changes (see `access/policy.rs`).
//! - Writes of those RBAC objects grant nothing the writer does not hold (`access/escalation.rs`).
//! - A credential that stops being valid ends the watches it opened ([`revocation`]).
//! - `Impersonate-*` headers make a request act as whom its sender may impersonate
//!   ([`Access::impersonate`]).
//! - Access reviews and TokenReviews ask the same questions on a client's behalf ([`reviews`]).

mod clusterset;
mod escalation;
mod impersonation;
pub(crate) mod join;
mod policy;
pub(crate) mod reviews;
pub mod revocation;
pub mod signing_key;

use std::sync::Arc;

use chrono::Utc;
use http::HeaderValue;
use serde_json::{json, Value};

use crate::auth::bootstrap_token::BootstrapToken;
use crate::auth::rbac::forbidden_status_message;
use crate::auth::token::bearer_token;
use crate::auth::user::SYSTEM_MASTERS;
use crate::auth::{authorize, AdminToken, Attributes, Decision, TokenAuthority, UserInfo};
use crate::cache::Cache;
use crate::error::{ApiError, Result};
use crate::request::RequestInfo;

pub use revocation::{Credential, Revocations};

/// The user name the admin token authenticates as.
pub const ADMIN_USER: &str = "flotilla-admin";

/// Authentication and authorization.
#[derive(Debug)]
pub struct Access {
    admin: AdminToken,
    authority: TokenAuthority,
    policy: policy::CachePolicy,
    revocations: Revocations,
}

/// Who a request is from, and what their credential depends on.
#[derive(Debug, Clone)]
pub struct Authenticated {
    /// The identity.
    pub user: UserInfo,
    /// What ends the credential (for long-lived requests: watches).
    pub credential: Credential,
}

// === impl Access ===

impl Access {
    /// Accept `admin` as the cluster-admin credential; issue and verify service-account tokens
    /// with `authority`.
    pub fn new(admin: AdminToken, authority: TokenAuthority) -> Access {
        Access {
            admin,
            authority,
            policy: policy::CachePolicy::default(),
            revocations: Revocations::default(),
        }
    }

    /// Start ending open watches whose credential `cache`'s changes revoke.
    pub fn start(&self, cache: Arc<Cache>) {
        self.revocations.start(cache);
    }

    /// Completes when `credential` stops being valid (its objects deleted, or expired).
    pub fn until_revoked(
        &self,
        cache: &Cache,
        credential: &Credential,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.revocations.until_revoked(cache, credential)
    }

    /// The service-account token issuer (TokenRequest, `/openid/v1/jwks`, OIDC discovery).
    pub fn authority(&self) -> &TokenAuthority {
        &self.authority
    }

    /// Who sent this `Authorization` header. Requests without a valid credential get 401.
    pub async fn authenticate(
        &self,
        cache: &Cache,
        authorization: Option<&HeaderValue>,
    ) -> Result<Authenticated> {
        let token = authorization
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token)
            .ok_or_else(ApiError::unauthorized)?;
        self.authenticate_token(cache, token, &[])
            .await
            .map(|(who, _)| who)
            .map_err(|_| ApiError::unauthorized())
    }

    /// Who `token` authenticates, for one of `audiences` (empty: the hub's own), and the
    /// audiences it is good for; or why not. Requests and TokenReviews both ask here, so a
    /// review answers exactly what a request with the token would meet.
    pub(crate) async fn authenticate_token(
        &self,
        cache: &Cache,
        token: &str,
        audiences: &[String],
    ) -> std::result::Result<(Authenticated, Vec<String>), String> {
        if self.admin.matches(token) {
            let user = UserInfo::authenticated(ADMIN_USER, vec![SYSTEM_MASTERS.to_string()]);
            let good_for = self.implicit_audiences(audiences)?;
            let credential = Credential::permanent();
            return Ok((Authenticated { user, credential }, good_for));
        }
        if let Some(bootstrap) = BootstrapToken::parse(token) {
            // No other credential has this form, so a refusal is final.
            let (user, credential) = join::authenticate(cache, &bootstrap, Utc::now())
                .await
                .map_err(|e| {
                    // Only the public id: the secret part never reaches a log.
                    let id = bootstrap.id();
                    tracing::debug!(token_id = %id, reason = %e, "bootstrap token refused");
                    e.to_string()
                })?;
            let good_for = self.implicit_audiences(audiences)?;
            return Ok((Authenticated { user, credential }, good_for));
        }
        let claims = self
            .authority
            .verify(token, audiences, Utc::now())
            .map_err(|e| {
                // The error never contains the token itself.
                tracing::debug!(reason = %e, "bearer token refused");
                e.to_string()
            })?;
        // A token dies with its service account, and with the object it is bound to: both must
        // still exist with the uids it names. (The hub stores no pods or nodes and issues no
        // tokens bound to them, so a token bound to one never passes.)
        let credential = Credential::service_account(&claims);
        if let Err(gone) = credential.check(cache) {
            tracing::debug!(subject = %claims.subject, %gone, "bearer token refused: its object is gone or was re-created");
            return Err(format!(
                "the object the token names ({gone}) is gone or was re-created"
            ));
        }
        let accepted = if audiences.is_empty() {
            self.authority.audiences()
        } else {
            audiences
        };
        let good_for = claims
            .audiences
            .iter()
            .filter(|a| accepted.contains(a))
            .cloned()
            .collect();
        let user = claims.user_info();
        Ok((Authenticated { user, credential }, good_for))
    }

    /// The admin and bootstrap tokens are for the hub itself: good for the hub's audiences that
    /// `wanted` names (all of them when it names none), refused when it names none of them.
    fn implicit_audiences(&self, wanted: &[String]) -> std::result::Result<Vec<String>, String> {
        let own = self.authority.audiences();
        if wanted.is_empty() {
            return Ok(own.to_vec());
        }
        let good_for: Vec<String> = wanted.iter().filter(|a| own.contains(a)).cloned().collect();
        if good_for.is_empty() {
            return Err(format!(
                "token audiences {own:?} is invalid for the target audiences {wanted:?}"
            ));
        }
        Ok(good_for)
    }

    /// May `user` do what `info` asks? 403 with Kubernetes' wording when not.
    pub async fn authorize(
        &self,
        cache: &Cache,
        user: &UserInfo,
        info: &RequestInfo,
    ) -> Result<()> {
        if user.is_privileged() {
            return Ok(());
        }
        if let Some(reason) = join::authorize(cache, user, info).await? {
            tracing::trace!(%reason, "allowed");
            return Ok(());
        }
        let attrs = attributes(user, info);
        let policy = self.policy.snapshot(cache);
        match authorize(&attrs, &*policy) {
            Decision::Allow { reason } => {
                tracing::trace!(%reason, "allowed");
                Ok(())
            }
            Decision::Deny { reason } => {
                let mut e = ApiError::forbidden(forbidden_status_message(&attrs, &reason));
                // As apierrors.NewForbidden: details name the resource (kind is its plural).
                e.details = Some(details(&attrs));
                Err(e)
            }
        }
    }
}

/// The authorizer's view of a request. Non-resource requests (`/version`, `/openid/v1/jwks`)
/// use the lower-cased HTTP method as their verb, as in Kubernetes.
fn attributes(user: &UserInfo, info: &RequestInfo) -> Attributes {
    if !info.is_resource_request {
        return Attributes::non_resource(user.clone(), info.verb.as_str(), info.path.as_str());
    }
    let mut attrs = Attributes::resource(
        user.clone(),
        info.verb.as_str(),
        info.group.as_str(),
        info.resource.as_str(),
    );
    if let Some(ns) = &info.namespace {
        attrs = attrs.in_namespace(ns.as_str());
    }
    if let Some(name) = &info.name {
        attrs = attrs.named(name.as_str());
    }
    if let Some(sub) = &info.subresource {
        attrs = attrs.subresource(sub.as_str());
    }
    attrs
}

fn details(attrs: &Attributes) -> Value {
    let mut d = serde_json::Map::new();
    for (key, value) in [
        ("name", &attrs.name),
        ("group", &attrs.api_group),
        ("kind", &attrs.resource),
    ] {
        if !value.is_empty() {
            d.insert(key.to_string(), json!(value));
        }
    }
    Value::Object(d)
}

#[cfg(test)]
mod tests;
