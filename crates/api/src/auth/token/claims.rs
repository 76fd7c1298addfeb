//! The claims of a service-account token, in the JSON shape Kubernetes writes.
//!
//! ```json
//! {"aud": ["https://hub.example"], "exp": 1700003600, "iat": 1700000000,
//!  "iss": "https://hub.example", "jti": "…",
//!  "kubernetes.io": {"namespace": "ns", "serviceaccount": {"name": "sa", "uid": "…"},
//!                    "pod": {"name": "p", "uid": "…"}},
//!  "nbf": 1700000000, "sub": "system:serviceaccount:ns:sa"}
//! ```

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Deserializer, Serialize};

use crate::auth::user::{service_account_username, UserInfo};

/// Extra key carrying `JTI=<jti>`, as Kubernetes sets it (audit logs correlate on it).
pub const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";
/// Extra key for the name of the pod a token is bound to.
pub const POD_NAME_KEY: &str = "authentication.kubernetes.io/pod-name";
/// Extra key for the uid of the pod a token is bound to.
pub const POD_UID_KEY: &str = "authentication.kubernetes.io/pod-uid";
/// Extra key for the node of the pod (or the node) a token is bound to.
pub const NODE_NAME_KEY: &str = "authentication.kubernetes.io/node-name";
/// Extra key for that node's uid.
pub const NODE_UID_KEY: &str = "authentication.kubernetes.io/node-uid";

/// A reference to an object by name and uid.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectRef {
    /// The object's name.
    pub name: String,
    /// The object's uid.
    #[serde(default)]
    pub uid: String,
}

/// The private `kubernetes.io` claim.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KubernetesClaims {
    /// The service account's namespace.
    pub namespace: String,
    /// The node the token (or its pod) is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<ObjectRef>,
    /// The pod the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<ObjectRef>,
    /// The secret the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ObjectRef>,
    /// The service account.
    #[serde(rename = "serviceaccount")]
    pub service_account: ObjectRef,
    /// When a client should start warning that it uses a stale token (Unix seconds).
    #[serde(rename = "warnafter", default, skip_serializing_if = "Option::is_none")]
    pub warn_after: Option<i64>,
}

/// The verified claims of a service-account token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceAccountClaims {
    /// `aud`: who the token is for.
    #[serde(rename = "aud", deserialize_with = "string_or_list")]
    pub audiences: Vec<String>,
    /// `exp`, Unix seconds.
    #[serde(rename = "exp")]
    pub expires_at: i64,
    /// `iat`, Unix seconds.
    #[serde(rename = "iat")]
    pub issued_at: i64,
    /// `iss`.
    #[serde(rename = "iss")]
    pub issuer: String,
    /// `jti`, the credential id (absent from tokens of old issuers).
    #[serde(rename = "jti", default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// `kubernetes.io`.
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: KubernetesClaims,
    /// `nbf`, Unix seconds.
    #[serde(rename = "nbf")]
    pub not_before: i64,
    /// `sub`: `system:serviceaccount:NS:NAME`.
    #[serde(rename = "sub")]
    pub subject: String,
}

// === impl ServiceAccountClaims ===

impl ServiceAccountClaims {
    /// When the token expires.
    pub fn expiration(&self) -> DateTime<Utc> {
        DateTime::from_timestamp(self.expires_at, 0).unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// The service account's namespace.
    pub fn namespace(&self) -> &str {
        &self.kubernetes.namespace
    }

    /// The service account's name.
    pub fn service_account_name(&self) -> &str {
        &self.kubernetes.service_account.name
    }

    /// The service account's uid; the caller checks the account still exists with it.
    pub fn service_account_uid(&self) -> &str {
        &self.kubernetes.service_account.uid
    }

    /// Are the claims a consistent service-account identity? Returns what is wrong.
    pub(super) fn check(&self) -> Result<(), String> {
        let k = &self.kubernetes;
        if k.namespace.is_empty() || k.service_account.name.is_empty() {
            return Err("namespace and service account name are required".into());
        }
        let want = service_account_username(&k.namespace, &k.service_account.name);
        if self.subject != want {
            return Err(format!("sub {:?} does not name {want:?}", self.subject));
        }
        Ok(())
    }

    /// The identity the token authenticates: the service account user in
    /// `system:serviceaccounts`, `system:serviceaccounts:NS` and `system:authenticated`, with
    /// the credential id and binding in `extra`.
    pub fn user_info(&self) -> UserInfo {
        let k = &self.kubernetes;
        let mut user = UserInfo::service_account(
            &k.namespace,
            &k.service_account.name,
            &k.service_account.uid,
        );
        let mut extra = BTreeMap::new();
        if !self.id.is_empty() {
            extra.insert(
                CREDENTIAL_ID_KEY.to_string(),
                vec![format!("JTI={}", self.id)],
            );
        }
        if let Some(pod) = k
            .pod
            .as_ref()
            .filter(|p| !p.name.is_empty() && !p.uid.is_empty())
        {
            extra.insert(POD_NAME_KEY.to_string(), vec![pod.name.clone()]);
            extra.insert(POD_UID_KEY.to_string(), vec![pod.uid.clone()]);
        }
        if let Some(node) = k.node.as_ref().filter(|n| !n.name.is_empty()) {
            extra.insert(NODE_NAME_KEY.to_string(), vec![node.name.clone()]);
            if !node.uid.is_empty() {
                extra.insert(NODE_UID_KEY.to_string(), vec![node.uid.clone()]);
            }
        }
        user.extra = extra;
        user
    }
}

/// `aud` may be one string or a list (RFC 7519 §4.1.3).
fn string_or_list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    })
}
