//! Join requests: the little a bootstrap token may do.
//!
//! A member's agent holding a bootstrap token authenticates as `system:bootstrap:<id>` (see
//! [`crate::auth::bootstrap_token`]). Before RBAC, this module grants it exactly two things: to
//! ask to join by creating a `Cluster`, and to read back the one Cluster it asked for while it
//! waits for an admin's approval. Everything else goes to RBAC, which by default gives such a
//! user only discovery, and which is how an approval later lets it fetch its agent's token.
//!
//! What the hub writes on a join request's behalf, and what such a request may ask for, is
//! admission: [`crate::admission::join`].

use std::sync::Arc;

use flotilla_apis::cluster::v1alpha1::GROUP;
use flotilla_apis::names::REQUESTED_BY_ANNOTATION;
use serde_json::Value;

use super::Credential;
use crate::auth::bootstrap_token::{self, BootstrapToken, BootstrapTokenError};
use crate::auth::UserInfo;
use crate::cache::{Cache, CachedObject};
use crate::error::Result;
use crate::request::RequestInfo;

/// The plural of `Cluster` in [`GROUP`].
pub(crate) const CLUSTERS: &str = "clusters";

/// Who `token` is, when its Secret vouches for it at `now`; the credential lasts as long as that
/// Secret stays as it is.
pub(super) async fn authenticate(
    cache: &Cache,
    token: &BootstrapToken<'_>,
    now: chrono::DateTime<chrono::Utc>,
) -> std::result::Result<(UserInfo, Credential), BootstrapTokenError> {
    // A Secret the cache cannot confirm in time counts as absent: the agent tries again.
    let secret = token_secret(cache, token.id())
        .await
        .ok()
        .flatten()
        .ok_or(BootstrapTokenError::NotFound)?;
    let user = token.verify(&secret.value(), now)?;
    Ok((user, Credential::bootstrap(&secret)))
}

/// The join-request grants: `Some(reason)` when `user` may do what `info` asks without RBAC;
/// `None` leaves the decision to RBAC. An error (504) when the answer needs a consistent read
/// the cache could not give in time.
pub(super) async fn authorize(
    cache: &Cache,
    user: &UserInfo,
    info: &RequestInfo,
) -> Result<Option<&'static str>> {
    if bootstrap_token::token_id(&user.name).is_none() {
        return Ok(None);
    }
    let on_clusters = info.is_resource_request
        && info.group == GROUP
        && info.resource == CLUSTERS
        && info.namespace.is_none();
    if !on_clusters {
        return Ok(None);
    }
    match (info.verb.as_str(), info.subresource.as_deref()) {
        ("create", None) => Ok(Some(
            "bootstrap tokens may ask to join (admission checks the rest)",
        )),
        ("get", None | Some("status")) => {
            let Some(name) = info.name.as_deref() else {
                return Ok(None);
            };
            let key = format!("/registry/{GROUP}/{CLUSTERS}/{name}");
            // The agent reads its request right after creating it: only a consistent read may
            // say the Cluster isn't there (then RBAC answers, with a 403 that reveals nothing).
            // A read that could not be made consistent says so (504), not 403: the agent would
            // take that for someone else's Cluster of that name.
            let Some(cluster) = fresh_get(cache, &key).await? else {
                return Ok(None);
            };
            Ok((requested_by(&cluster.value()) == Some(user.name.as_str()))
                .then_some("bootstrap tokens may read the join request they made"))
        }
        _ => Ok(None),
    }
}

/// Token `id`'s Secret, read consistently when the cache doesn't hold it yet (the admin may have
/// created it a moment ago, possibly through another replica).
pub(crate) async fn token_secret(cache: &Cache, id: &str) -> Result<Option<Arc<CachedObject>>> {
    fresh_get(cache, &bootstrap_token::secret_key(id)).await
}

/// `key` from the cache; on a miss, again after a consistent read (an error when the cache
/// could not catch up in time).
async fn fresh_get(cache: &Cache, key: &str) -> Result<Option<Arc<CachedObject>>> {
    if let Some(o) = cache.get(key) {
        return Ok(Some(o));
    }
    cache.sync().await?;
    Ok(cache.get(key))
}

/// The bootstrap user a Cluster was requested by.
pub(crate) fn requested_by(obj: &Value) -> Option<&str> {
    obj.pointer("/metadata/annotations")?
        .get(REQUESTED_BY_ANNOTATION)?
        .as_str()
}

#[cfg(test)]
mod tests;
