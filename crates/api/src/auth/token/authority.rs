//! Issuing and verifying service-account tokens, and publishing the keys that verify them.
//!
//! Issuance follows `serviceaccounts/token` (TokenRequest): expiry defaults to one hour, may not
//! be under ten minutes or over 2^32 seconds, and is silently capped at the configured maximum;
//! audiences default to the hub's own (by default, the issuer). Verification accepts a token
//! only if it names this issuer, is signed by one of the known keys, is within its validity
//! window give or take a minute of clock skew, and is meant for one of the accepted audiences.
//! Whether the service account (and bound pod or secret) still exists with the uid in the claims
//! is for the caller to check, since that needs the store.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, SecondsFormat, Utc};
use ring::rand::SecureRandom;
use serde_json::{json, Value};

use super::claims::{KubernetesClaims, ObjectRef, ServiceAccountClaims};
use super::signer::{TokenSigner, VerificationKey};
use super::{jwt, BearerToken, Result, TokenError};
use crate::auth::user::service_account_username;

/// Expiry when a TokenRequest does not ask for one.
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// Shortest expiry Kubernetes allows.
pub const MIN_EXPIRATION_SECONDS: i64 = 600;
/// Longest expiry Kubernetes accepts in a request (2^32 s).
pub const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;
/// Clock skew tolerated on `exp`, `nbf` and `iat`, as Kubernetes' JWT validation allows.
pub const LEEWAY_SECONDS: i64 = 60;

/// What a token is bound to: it stops being valid when that object is gone (checked by the
/// caller against the store).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    /// A pod, and the node it runs on when known.
    Pod {
        /// The pod.
        pod: ObjectRef,
        /// Its node.
        node: Option<ObjectRef>,
    },
    /// A secret.
    Secret(ObjectRef),
    /// A node.
    Node(ObjectRef),
}

/// A request for a service-account token (the parts of `authentication.k8s.io/v1`
/// TokenRequest the issuer needs, with the service account already looked up).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRequest {
    /// The service account's namespace.
    pub namespace: String,
    /// The service account.
    pub service_account: ObjectRef,
    /// `spec.audiences`; empty means the hub's audiences.
    pub audiences: Vec<String>,
    /// `spec.expirationSeconds`; `None` means one hour.
    pub expiration_seconds: Option<i64>,
    /// `spec.boundObjectRef`, resolved.
    pub binding: Option<Binding>,
}

/// A freshly signed token and its claims.
#[derive(Debug, Clone)]
pub struct IssuedToken {
    /// The JWT.
    pub token: BearerToken,
    /// What it says.
    pub claims: ServiceAccountClaims,
}

impl IssuedToken {
    /// The TokenRequest `status`: `token` and `expirationTimestamp`.
    pub fn status(&self) -> Value {
        json!({
            "token": self.token.expose(),
            "expirationTimestamp": self.claims.expiration().to_rfc3339_opts(SecondsFormat::Secs, true),
        })
    }
}

/// The hub as a service-account token issuer.
#[derive(Debug)]
pub struct TokenAuthority {
    issuer: String,
    signer: TokenSigner,
    /// The signer's key first, then retired keys still accepted.
    keys: Vec<VerificationKey>,
    audiences: Vec<String>,
    max_expiration_seconds: Option<i64>,
    /// Tokens of this issuer whose signature one of `keys` verified, with their claims: the
    /// same token checks out again without the ECDSA verification (a tenth of an idle hub's
    /// CPU with a thousand agents beating) or decoding it again. Expiry, audience and the
    /// rest are checked each time.
    verified: Mutex<HashMap<Box<str>, Arc<ServiceAccountClaims>>>,
}

/// How many verified tokens are remembered; beyond it the memory starts again empty.
const VERIFIED_TOKENS: usize = 16_384;

// === impl TokenAuthority ===

impl TokenAuthority {
    /// Issue as `issuer` (a URL such as `https://hub.example:6443`), signing with `signer`;
    /// tokens are for `[issuer]` unless [`TokenAuthority::with_audiences`] says otherwise.
    pub fn new(issuer: impl Into<String>, signer: TokenSigner) -> Self {
        let issuer = issuer.into();
        TokenAuthority {
            audiences: vec![issuer.clone()],
            keys: vec![signer.verification_key().clone()],
            issuer,
            signer,
            max_expiration_seconds: None,
            verified: Mutex::default(),
        }
    }

    /// The audiences the API server accepts and gives tokens by default (`--api-audiences`).
    pub fn with_audiences(mut self, audiences: Vec<String>) -> Self {
        if !audiences.is_empty() {
            self.audiences = audiences;
        }
        self
    }

    /// Cap every token's lifetime (`--service-account-max-token-expiration`); requests for
    /// longer get this long, as in Kubernetes.
    pub fn with_max_expiration(mut self, seconds: i64) -> Self {
        self.max_expiration_seconds = Some(seconds.max(MIN_EXPIRATION_SECONDS));
        self
    }

    /// Also accept tokens signed by `key` (a retired signing key, during rotation).
    pub fn with_verification_key(mut self, key: VerificationKey) -> Self {
        if !self.keys.contains(&key) {
            self.keys.push(key);
        }
        self
    }

    /// `iss` of the tokens issued.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The audiences accepted by default.
    pub fn audiences(&self) -> &[String] {
        &self.audiences
    }

    /// Sign a token for `request` at time `now`.
    pub fn issue(&self, request: &TokenRequest, now: DateTime<Utc>) -> Result<IssuedToken> {
        let invalid = |field: &str, message: String| {
            Err(TokenError::InvalidRequest(format!("{field}: {message}")))
        };
        let requested = request
            .expiration_seconds
            .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
        if requested < MIN_EXPIRATION_SECONDS {
            return invalid(
                "spec.expirationSeconds",
                format!(
                    "Invalid value: {requested}: may not specify a duration less than 10 minutes"
                ),
            );
        }
        if requested > MAX_EXPIRATION_SECONDS {
            return invalid(
                "spec.expirationSeconds",
                format!("Invalid value: {requested}: may not specify a duration larger than 2^32 seconds"),
            );
        }
        if request.namespace.is_empty() || request.service_account.name.is_empty() {
            return invalid(
                "metadata",
                "Required value: namespace and service account name".into(),
            );
        }
        let lifetime = self
            .max_expiration_seconds
            .map_or(requested, |max| requested.min(max));
        let iat = now.timestamp();
        let (pod, node, secret) = match request.binding.clone() {
            Some(Binding::Pod { pod, node }) => (Some(pod), node, None),
            Some(Binding::Secret(secret)) => (None, None, Some(secret)),
            Some(Binding::Node(node)) => (None, Some(node), None),
            None => (None, None, None),
        };
        let claims = ServiceAccountClaims {
            audiences: if request.audiences.is_empty() {
                self.audiences.clone()
            } else {
                request.audiences.clone()
            },
            expires_at: iat + lifetime,
            issued_at: iat,
            issuer: self.issuer.clone(),
            id: uuid_v4()?,
            kubernetes: KubernetesClaims {
                namespace: request.namespace.clone(),
                node,
                pod,
                secret,
                service_account: request.service_account.clone(),
                warn_after: None,
            },
            not_before: iat,
            subject: service_account_username(&request.namespace, &request.service_account.name),
        };
        let payload = serde_json::to_value(&claims).map_err(|_| TokenError::Sign)?;
        let token = BearerToken::new(jwt::encode(&payload, &self.signer)?);
        Ok(IssuedToken { token, claims })
    }

    /// Verify `token` at time `now` for one of `audiences` (empty: the hub's audiences).
    ///
    /// [`TokenError::ForeignIssuer`] means the token is not the hub's to judge: another
    /// authenticator may accept it. Any other error means the token is invalid.
    pub fn verify(
        &self,
        token: &str,
        audiences: &[String],
        now: DateTime<Utc>,
    ) -> Result<ServiceAccountClaims> {
        let claims = self.verified_claims(token)?;
        let now = now.timestamp();
        if now - LEEWAY_SECONDS > claims.expires_at {
            return Err(TokenError::Expired);
        }
        if now + LEEWAY_SECONDS < claims.not_before || now + LEEWAY_SECONDS < claims.issued_at {
            return Err(TokenError::NotYetValid);
        }
        let accepted = if audiences.is_empty() {
            &self.audiences
        } else {
            audiences
        };
        if !claims.audiences.iter().any(|a| accepted.contains(a)) {
            return Err(TokenError::Audience {
                token: claims.audiences.clone(),
                accepted: accepted.to_vec(),
            });
        }
        Ok((*claims).clone())
    }

    /// The claims of `token` once its issuer, signature and claims' shape check out,
    /// remembered per token.
    fn verified_claims(&self, token: &str) -> Result<Arc<ServiceAccountClaims>> {
        let remembered = |v: &HashMap<Box<str>, Arc<ServiceAccountClaims>>| v.get(token).cloned();
        if let Some(claims) = remembered(&self.verified.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(claims);
        }
        let unverified = jwt::decode(token)?;
        // Kubernetes checks the issuer before the signature, so that tokens of other issuers
        // fall through to the next authenticator instead of failing here.
        if unverified.payload.get("iss").and_then(Value::as_str) != Some(self.issuer.as_str()) {
            return Err(TokenError::ForeignIssuer);
        }
        unverified.verify(&self.keys)?;
        let claims: Arc<ServiceAccountClaims> = Arc::new(
            serde_json::from_value(unverified.payload)
                .map_err(|e| TokenError::Claims(e.to_string()))?,
        );
        claims.check().map_err(TokenError::Claims)?;
        let mut verified = self.verified.lock().unwrap_or_else(|e| e.into_inner());
        if verified.len() >= VERIFIED_TOKENS {
            verified.clear();
        }
        verified.insert(token.into(), claims.clone());
        Ok(claims)
    }

    /// `/openid/v1/jwks`: every key that verifies hub tokens.
    pub fn jwks(&self) -> Value {
        json!({"keys": self.keys.iter().map(VerificationKey::to_jwk).collect::<Vec<_>>()})
    }

    /// `/.well-known/openid-configuration`; `jwks_uri` defaults to `{issuer}/openid/v1/jwks`.
    pub fn openid_configuration(&self, jwks_uri: Option<&str>) -> Value {
        let jwks_uri = jwks_uri.map_or_else(
            || format!("{}/openid/v1/jwks", self.issuer.trim_end_matches('/')),
            str::to_string,
        );
        json!({
            "issuer": self.issuer,
            "jwks_uri": jwks_uri,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        })
    }
}

#[cfg(test)]
impl TokenAuthority {
    /// Sign arbitrary claims, for tests that need tokens `issue` would never produce.
    pub(crate) fn sign_payload(&self, payload: &Value) -> Result<String> {
        jwt::encode(payload, &self.signer)
    }

    /// Sign under an arbitrary JWS header.
    pub(crate) fn sign_with_header(&self, header: &Value, payload: &Value) -> Result<String> {
        jwt::encode_with_header(header, payload, &self.signer)
    }
}

/// A random (version 4) UUID for `jti`.
fn uuid_v4() -> Result<String> {
    let mut b = [0u8; 16];
    ring::rand::SystemRandom::new()
        .fill(&mut b)
        .map_err(|_| TokenError::Random)?;
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    ))
}
