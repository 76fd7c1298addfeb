//! Bootstrap tokens: the short-lived `<id>.<secret>` credentials a member cluster's agent uses
//! once, to ask to join the hub.
//!
//! They are kubeadm's bootstrap tokens, kept the way kubeadm keeps them: a Secret of type
//! [`BOOTSTRAP_TOKEN_TYPE`] named `bootstrap-token-<id>` (here in [`SYSTEM_NAMESPACE`]) whose
//! `data` holds `token-id`, `token-secret`, `usage-bootstrap-authentication` and an optional
//! `expiration`. The token id is public (it names the Secret and the user); only the secret part
//! proves possession, so it is compared in constant time and never logged. A token
//! authenticates as `system:bootstrap:<id>` in [`BOOTSTRAP_GROUPS`] — an identity that may only
//! ask to join (see `access/join.rs`).
//!
//! Pure functions over the Secret as JSON: the server looks the Secret up and passes the clock.

use std::fmt;

use base64::Engine;
use chrono::{DateTime, Utc};
use flotilla_apis::names::{
    BOOTSTRAP_GROUPS, BOOTSTRAP_TOKEN_CLUSTER_KEY, BOOTSTRAP_TOKEN_SECRET_PREFIX,
    BOOTSTRAP_TOKEN_TYPE, BOOTSTRAP_USER_PREFIX, SYSTEM_NAMESPACE,
};
use serde_json::Value;

use super::UserInfo;

/// Length of the public token id.
const ID_LEN: usize = 6;
/// Length of the secret part.
const SECRET_LEN: usize = 16;

const KEY_TOKEN_ID: &str = "token-id";
const KEY_TOKEN_SECRET: &str = "token-secret";
const KEY_EXPIRATION: &str = "expiration";
const KEY_USAGE_AUTHENTICATION: &str = "usage-bootstrap-authentication";

/// Why a bootstrap token Secret does not authenticate the presented token. The messages are for
/// the hub's debug log; they never contain the token's secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BootstrapTokenError {
    /// No Secret `bootstrap-token-<id>` exists.
    #[error("no bootstrap token Secret exists for this id")]
    NotFound,
    /// The Secret is being deleted.
    #[error("the bootstrap token Secret is being deleted")]
    Terminating,
    /// The Secret is not of [`BOOTSTRAP_TOKEN_TYPE`].
    #[error("the Secret's type is {0:?}, not {BOOTSTRAP_TOKEN_TYPE:?}")]
    WrongType(String),
    /// A required `data` key is absent.
    #[error("the Secret has no {0:?} key")]
    MissingKey(&'static str),
    /// A `data` value is not base64-encoded UTF-8.
    #[error("the Secret's {0:?} value is not base64-encoded text")]
    BadEncoding(&'static str),
    /// `token-id` differs from the id the token (and the Secret's name) carries.
    #[error("the Secret's token-id does not match its name")]
    IdMismatch,
    /// The secret part differs.
    #[error("the token's secret does not match")]
    SecretMismatch,
    /// `usage-bootstrap-authentication` is not `"true"`.
    #[error("the token is not for authentication (usage-bootstrap-authentication != \"true\")")]
    NotForAuthentication,
    /// `expiration` is not an RFC 3339 time (treated as expired, as Kubernetes does).
    #[error("the token's expiration {0:?} is not an RFC 3339 time")]
    BadExpiration(String),
    /// `expiration` has passed.
    #[error("the token expired at {0}")]
    Expired(String),
}

/// A presented bearer token in bootstrap-token form. `Debug` shows only the id.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct BootstrapToken<'a> {
    id: &'a str,
    secret: &'a str,
}

// === impl BootstrapToken ===

impl<'a> BootstrapToken<'a> {
    /// `token` as a bootstrap token when it has kubeadm's form `^[a-z0-9]{6}\.[a-z0-9]{16}$`.
    pub fn parse(token: &'a str) -> Option<Self> {
        let (id, secret) = token.split_once('.')?;
        let valid = |s: &str, len: usize| {
            s.len() == len
                && s.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        };
        (valid(id, ID_LEN) && valid(secret, SECRET_LEN)).then_some(BootstrapToken { id, secret })
    }

    /// The public token id.
    pub fn id(&self) -> &'a str {
        self.id
    }

    /// Does the token Secret `secret` (as stored, with base64 `data`) authenticate this token at
    /// `now`? The user it authenticates as when it does.
    pub fn verify(
        &self,
        secret: &Value,
        now: DateTime<Utc>,
    ) -> Result<UserInfo, BootstrapTokenError> {
        check_secret(secret)?;
        if data(secret, KEY_TOKEN_ID)? != self.id {
            return Err(BootstrapTokenError::IdMismatch);
        }
        if !same_secret(&data(secret, KEY_TOKEN_SECRET)?, self.secret) {
            return Err(BootstrapTokenError::SecretMismatch);
        }
        if optional_data(secret, KEY_USAGE_AUTHENTICATION)?.as_deref() != Some("true") {
            return Err(BootstrapTokenError::NotForAuthentication);
        }
        if let Some(expiration) = optional_data(secret, KEY_EXPIRATION)? {
            let at = DateTime::parse_from_rfc3339(&expiration)
                .map_err(|_| BootstrapTokenError::BadExpiration(expiration.clone()))?;
            if at <= now {
                return Err(BootstrapTokenError::Expired(expiration));
            }
        }
        Ok(user(self.id))
    }
}

impl fmt::Debug for BootstrapToken<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BootstrapToken({}.<redacted>)", self.id)
    }
}

/// The name of token `id`'s Secret in [`SYSTEM_NAMESPACE`].
pub fn secret_name(id: &str) -> String {
    format!("{BOOTSTRAP_TOKEN_SECRET_PREFIX}{id}")
}

/// The storage key of token `id`'s Secret.
pub fn secret_key(id: &str) -> String {
    format!(
        "/registry/core/secrets/{SYSTEM_NAMESPACE}/{}",
        secret_name(id)
    )
}

/// The user token `id` authenticates as: `system:bootstrap:<id>`, in [`BOOTSTRAP_GROUPS`] and
/// `system:authenticated`.
pub fn user(id: &str) -> UserInfo {
    UserInfo::authenticated(
        format!("{BOOTSTRAP_USER_PREFIX}{id}"),
        BOOTSTRAP_GROUPS.iter().map(|g| g.to_string()).collect(),
    )
}

/// The token id of a bootstrap user's name; `None` for every other user.
pub fn token_id(user_name: &str) -> Option<&str> {
    user_name
        .strip_prefix(BOOTSTRAP_USER_PREFIX)
        .filter(|id| !id.is_empty())
}

/// The only Cluster name the token Secret `secret` may ask to join as, if it is pinned to one
/// ([`BOOTSTRAP_TOKEN_CLUSTER_KEY`]).
pub fn pinned_cluster(secret: &Value) -> Result<Option<String>, BootstrapTokenError> {
    optional_data(secret, BOOTSTRAP_TOKEN_CLUSTER_KEY)
}

/// What every token Secret must be, whatever the token.
fn check_secret(secret: &Value) -> Result<(), BootstrapTokenError> {
    if secret.pointer("/metadata/deletionTimestamp").is_some() {
        return Err(BootstrapTokenError::Terminating);
    }
    match secret.get("type").and_then(Value::as_str) {
        Some(BOOTSTRAP_TOKEN_TYPE) => Ok(()),
        other => Err(BootstrapTokenError::WrongType(
            other.unwrap_or_default().to_string(),
        )),
    }
}

/// A required `data` value, decoded.
fn data(secret: &Value, key: &'static str) -> Result<String, BootstrapTokenError> {
    optional_data(secret, key)?.ok_or(BootstrapTokenError::MissingKey(key))
}

/// An optional `data` value, decoded.
fn optional_data(secret: &Value, key: &'static str) -> Result<Option<String>, BootstrapTokenError> {
    let Some(v) = secret.get("data").and_then(|d| d.get(key)) else {
        return Ok(None);
    };
    let encoded = v.as_str().ok_or(BootstrapTokenError::BadEncoding(key))?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| BootstrapTokenError::BadEncoding(key))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| BootstrapTokenError::BadEncoding(key))
}

/// Constant-time equality: comparing fixed-size digests hides the stored secret's length as
/// well as its content from response timing.
fn same_secret(stored: &str, presented: &str) -> bool {
    let digest = |s: &str| ring::digest::digest(&ring::digest::SHA256, s.as_bytes());
    let (a, b) = (digest(stored), digest(presented));
    let diff = a
        .as_ref()
        .iter()
        .zip(b.as_ref())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests;
