//! Impersonation (`kubectl --as`, `--as-group`, `--as-uid`): a request's `Impersonate-*` headers
//! make it act as someone else, when its sender may `impersonate` each thing they name, as
//! kube-apiserver's impersonation filter does it:
//!
//! - `Impersonate-User` names a user (`users`), or a service account (`serviceaccounts` in its
//!   namespace) when it has that form; `Impersonate-Group` (repeated) names `groups`;
//!   `Impersonate-Uid` names `uids` and `Impersonate-Extra-<key>` names `userextras/<key>`
//!   (both in `authentication.k8s.io`). Anything but a user needs a user too.
//! - Each is authorized with the verb `impersonate`; the first refused is a 403 in kube's words.
//! - The acting user has exactly the groups given (a service account's own when none are), plus
//!   `system:authenticated` (`system:unauthenticated` for the anonymous user).

use http::HeaderMap;

use super::{details, Access};
use crate::auth::rbac::forbidden_status_message;
use crate::auth::user::{
    split_service_account_username, ANONYMOUS, AUTHENTICATED, SERVICE_ACCOUNTS,
    SERVICE_ACCOUNT_GROUP_PREFIX, UNAUTHENTICATED,
};
use crate::auth::{Attributes, Decision, UserInfo};
use crate::cache::Cache;
use crate::error::{ApiError, Result};

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";
const AUTHENTICATION: &str = "authentication.k8s.io";

/// What authorizes acting as one thing a request names.
fn ask(requestor: &UserInfo, group: &str, resource: &str, ns: &str, name: &str) -> Attributes {
    Attributes::resource(requestor.clone(), "impersonate", group, resource)
        .in_namespace(ns)
        .named(name)
}

fn values<'a>(headers: &'a HeaderMap, name: &str) -> Vec<&'a str> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .collect()
}

/// `%XX` escapes decoded, as `url.PathUnescape` (a bad escape is kept as is).
fn unescape(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

// === impl Access ===

impl Access {
    /// Whom a request from `requestor` with `headers` acts as: the requestor, or whom its
    /// `Impersonate-*` headers name (403 when it may not impersonate them).
    pub fn impersonate(
        &self,
        cache: &Cache,
        requestor: UserInfo,
        headers: &HeaderMap,
    ) -> Result<UserInfo> {
        let user = headers
            .get(USER)
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.is_empty());
        let groups = values(headers, GROUP);
        let uid = values(headers, UID).into_iter().next();
        let mut extras: Vec<(String, &str)> = Vec::new();
        for (name, value) in headers {
            if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
                if let Ok(v) = value.to_str() {
                    extras.push((unescape(&key.to_ascii_lowercase()), v));
                }
            }
        }
        let Some(user) = user else {
            if groups.is_empty() && uid.is_none() && extras.is_empty() {
                return Ok(requestor);
            }
            // kube-apiserver answers this with an internal error.
            return Err(ApiError::internal(
                "requested impersonation of groups, a uid or extra values without impersonating a user",
            ));
        };
        let mut asks = Vec::new();
        let mut acting = UserInfo {
            name: user.to_string(),
            ..Default::default()
        };
        match split_service_account_username(user) {
            Some((ns, name)) => {
                asks.push(ask(&requestor, "", "serviceaccounts", ns, name));
                if groups.is_empty() {
                    acting.groups = vec![
                        SERVICE_ACCOUNTS.to_string(),
                        format!("{SERVICE_ACCOUNT_GROUP_PREFIX}{ns}"),
                    ];
                }
            }
            None => asks.push(ask(&requestor, "", "users", "", user)),
        }
        for g in &groups {
            asks.push(ask(&requestor, "", "groups", "", g));
            acting.groups.push(g.to_string());
        }
        for (key, value) in &extras {
            let mut a = ask(&requestor, AUTHENTICATION, "userextras", "", value);
            a.subresource = key.clone();
            asks.push(a);
            acting
                .extra
                .entry(key.clone())
                .or_default()
                .push(value.to_string());
        }
        if let Some(uid) = uid {
            asks.push(ask(&requestor, AUTHENTICATION, "uids", "", uid));
            acting.uid = uid.to_string();
        }
        for a in asks {
            if let Decision::Deny { reason } = self.decide(cache, &a) {
                let mut e = ApiError::forbidden(forbidden_status_message(&a, &reason));
                e.details = Some(details(&a));
                return Err(e);
            }
        }
        let add = if acting.name == ANONYMOUS {
            (!acting.in_group(UNAUTHENTICATED)).then_some(UNAUTHENTICATED)
        } else {
            let either = acting.in_group(AUTHENTICATED) || acting.in_group(UNAUTHENTICATED);
            (!either).then_some(AUTHENTICATED)
        };
        if let Some(group) = add {
            acting.groups.push(group.to_string());
        }
        tracing::debug!(requestor = %requestor.name, acting = %acting.name, "impersonating");
        Ok(acting)
    }
}

#[cfg(test)]
mod tests;
