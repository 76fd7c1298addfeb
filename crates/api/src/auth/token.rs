//! The hub's bearer tokens.
//!
//! Two kinds reach the hub:
//! - the **admin token** written to `admin.kubeconfig` at first start: an opaque secret checked in
//!   constant time by [`AdminToken`], which keeps only its SHA-256 digest;
//! - **service-account tokens** issued through `serviceaccounts/token` (TokenRequest) exactly as
//!   Kubernetes issues them: ES256 JWTs signed with a key the hub generates once and keeps in its
//!   data directory ([`TokenSigner`]), with Kubernetes' claims, and verified by
//!   [`TokenAuthority::verify`]. The authority also serves `/openid/v1/jwks` and
//!   `/.well-known/openid-configuration`, so member clusters and cloud providers can verify hub
//!   tokens on their own.
//!
//! Secrets never reach logs: [`BearerToken`], [`AdminToken`] and [`TokenSigner`] print redacted
//! `Debug` output, and no error message contains a token.

mod authority;
mod claims;
mod jwt;
mod signer;

use std::fmt;

use ring::rand::SecureRandom;

pub use authority::{
    Binding, IssuedToken, TokenAuthority, TokenRequest, DEFAULT_EXPIRATION_SECONDS, LEEWAY_SECONDS,
    MAX_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS,
};
pub use claims::{KubernetesClaims, ObjectRef, ServiceAccountClaims};
pub use signer::{TokenSigner, VerificationKey};

/// Why a token could not be issued or was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// The system random source failed while generating a key or token id.
    #[error("the system random number generator failed")]
    Random,
    /// The key file is not a PEM-encoded PKCS#8 P-256 private key.
    #[error(
        "the service account signing key is not a PEM \"PRIVATE KEY\" (PKCS#8, P-256): {0}; \
         remove the file to let the hub generate a new one (tokens it signed become invalid)"
    )]
    ParseKey(String),
    /// A JWK given for verification is not a P-256 public key.
    #[error("the verification key is not a P-256 JWK: {0}")]
    ParseJwk(String),
    /// Signing failed.
    #[error("signing the service account token failed")]
    Sign,
    /// The token is not a compact JWS with a JSON header and payload.
    #[error("the token is not a well-formed JWT: {0}")]
    Malformed(&'static str),
    /// The token was issued by someone else; another authenticator may accept it.
    #[error("the token was not issued by this hub")]
    ForeignIssuer,
    /// The token is signed with an algorithm the hub does not use.
    #[error("the token's signing algorithm {0:?} is not accepted (only ES256)")]
    Algorithm(String),
    /// No verification key produced a valid signature.
    #[error("the token's signature is invalid")]
    Signature,
    /// The token expired (beyond the clock-skew leeway).
    #[error("service account token has expired")]
    Expired,
    /// The token's `nbf` or `iat` is in the future (beyond the leeway).
    #[error("service account token is not valid yet")]
    NotYetValid,
    /// None of the token's audiences is accepted here.
    #[error("token audiences {} is invalid for the target audiences {}", go_list(.token), go_list(.accepted))]
    Audience {
        /// The token's `aud`.
        token: Vec<String>,
        /// What the verifier accepts.
        accepted: Vec<String>,
    },
    /// The claims are not a service account's.
    #[error("invalid service account token claims: {0}")]
    Claims(String),
    /// A TokenRequest asked for something Kubernetes would refuse; the text is its field error.
    #[error("{0}")]
    InvalidRequest(String),
}

/// `["a" "b"]`, the way Go's `%q` prints a string slice in Kubernetes' messages.
fn go_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", quoted.join(" "))
}

/// Token results.
pub type Result<T, E = TokenError> = std::result::Result<T, E>;

/// A bearer credential. Its `Debug` output is redacted; read it with [`BearerToken::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct BearerToken(String);

// === impl BearerToken ===

impl BearerToken {
    /// Wrap a token string.
    pub fn new(token: impl Into<String>) -> Self {
        BearerToken(token.into())
    }

    /// A fresh opaque secret: 32 random bytes, base64url without padding (43 characters).
    pub fn generate() -> Result<Self> {
        let mut bytes = [0u8; 32];
        ring::rand::SystemRandom::new()
            .fill(&mut bytes)
            .map_err(|_| TokenError::Random)?;
        Ok(BearerToken(b64(&bytes)))
    }

    /// The secret itself, for the response body or kubeconfig that must carry it.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The secret itself, by value.
    pub fn into_inner(self) -> String {
        self.0
    }
}

impl fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("BearerToken(<redacted>)")
    }
}

/// The static admin credential. Only its SHA-256 digest is held; comparisons take the same time
/// whatever is presented, so response timing reveals nothing about the token.
#[derive(Clone)]
pub struct AdminToken {
    /// `None` when configured empty: then nothing matches.
    digest: Option<[u8; 32]>,
}

// === impl AdminToken ===

impl AdminToken {
    /// Accept `token` as the admin credential.
    pub fn new(token: &str) -> Self {
        AdminToken {
            digest: (!token.is_empty()).then(|| sha256(token.as_bytes())),
        }
    }

    /// Is `presented` the admin token?
    pub fn matches(&self, presented: &str) -> bool {
        let Some(digest) = &self.digest else {
            return false;
        };
        // Comparing fixed-size digests hides the length as well as the content.
        let other = sha256(presented.as_bytes());
        let diff = digest
            .iter()
            .zip(other.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b));
        std::hint::black_box(diff) == 0
    }
}

impl fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AdminToken(<redacted>)")
    }
}

/// The token in an `Authorization` header value, as Kubernetes reads it: the scheme `Bearer`
/// in any case, one space, then the token (anything after a further space is ignored).
pub fn bearer_token(authorization: &str) -> Option<&str> {
    let mut parts = authorization.trim().splitn(3, ' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn sha256(data: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, data).as_ref());
    out
}

/// base64url without padding, the JOSE encoding.
fn b64(data: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(data)
}

fn b64_decode(data: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(data)
        .ok()
}
