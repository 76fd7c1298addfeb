//! Bearer tokens: service-account tokens as JWTs signed by the hub (HS256 with a key kept in the
//! data directory), with the claims Kubernetes puts in them.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

/// Shortest lifetime a token may be requested for (Kubernetes' minimum).
pub const MIN_EXPIRATION_SECONDS: i64 = 600;
/// Default lifetime.
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// Longest lifetime granted.
pub const MAX_EXPIRATION_SECONDS: i64 = 48 * 3600;

/// The `kubernetes.io` claim.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct KubernetesClaim {
    /// Namespace of the service account.
    pub namespace: String,
    /// The service account.
    pub serviceaccount: Ref,
}

/// Name and uid of the service account.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Ref {
    /// Name.
    pub name: String,
    /// uid (a token dies with its service account).
    pub uid: String,
}

/// Claims of a service-account token.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Claims {
    /// Issuer.
    pub iss: String,
    /// `system:serviceaccount:NS:NAME`.
    pub sub: String,
    /// Audiences.
    pub aud: Vec<String>,
    /// Expiry (unix seconds).
    pub exp: i64,
    /// Issued at.
    pub iat: i64,
    /// Not before.
    pub nbf: i64,
    /// Token id.
    pub jti: String,
    /// Kubernetes details.
    #[serde(rename = "kubernetes.io")]
    pub kubernetes: KubernetesClaim,
}

/// Why a token was refused (never includes the token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Not a JWT of ours.
    #[error("malformed token")]
    Malformed,
    /// Signature mismatch.
    #[error("invalid signature")]
    Signature,
    /// Expired or not yet valid.
    #[error("token is expired or not yet valid")]
    Expired,
    /// Wrong audience.
    #[error("token audience does not match")]
    Audience,
}

/// Signs and verifies tokens.
pub struct Signer {
    key: Vec<u8>,
    issuer: String,
}

impl std::fmt::Debug for Signer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signer")
            .field("issuer", &self.issuer)
            .finish_non_exhaustive()
    }
}

type HmacSha256 = Hmac<Sha256>;

impl Signer {
    /// A signer with `key` (≥ 32 bytes of randomness) for `issuer`.
    pub fn new(key: Vec<u8>, issuer: String) -> Signer {
        Signer { key, issuer }
    }

    /// The issuer URL.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    fn mac(&self, data: &[u8]) -> Vec<u8> {
        // HMAC takes keys of any length, so new_from_slice cannot fail.
        let mut m = HmacSha256::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
        m.update(data);
        m.finalize().into_bytes().to_vec()
    }

    /// Issue a token.
    pub fn sign(&self, claims: &Claims) -> String {
        let header = B64.encode(br#"{"alg":"HS256","typ":"JWT"}"#);
        let body = B64.encode(serde_json::to_vec(claims).unwrap_or_default());
        let signing_input = format!("{header}.{body}");
        let sig = B64.encode(self.mac(signing_input.as_bytes()));
        format!("{signing_input}.{sig}")
    }

    /// Verify a token at time `now` for any of `audiences` (empty: the issuer).
    pub fn verify(
        &self,
        token: &str,
        audiences: &[String],
        now: i64,
    ) -> Result<Claims, TokenError> {
        let mut parts = token.split('.');
        let (Some(h), Some(b), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(TokenError::Malformed);
        };
        let sig = B64.decode(s).map_err(|_| TokenError::Malformed)?;
        let mut m = HmacSha256::new_from_slice(&self.key).map_err(|_| TokenError::Signature)?;
        m.update(format!("{h}.{b}").as_bytes());
        m.verify_slice(&sig).map_err(|_| TokenError::Signature)?;
        let claims: Claims =
            serde_json::from_slice(&B64.decode(b).map_err(|_| TokenError::Malformed)?)
                .map_err(|_| TokenError::Malformed)?;
        if now >= claims.exp || now < claims.nbf {
            return Err(TokenError::Expired);
        }
        let default_aud = [self.issuer.clone()];
        let wanted = if audiences.is_empty() {
            &default_aud[..]
        } else {
            audiences
        };
        if !claims.aud.iter().any(|a| wanted.contains(a)) {
            return Err(TokenError::Audience);
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(exp: i64, aud: &str) -> Claims {
        Claims {
            iss: "https://hub".into(),
            sub: "system:serviceaccount:ns:sa".into(),
            aud: vec![aud.into()],
            exp,
            iat: 100,
            nbf: 100,
            jti: "j".into(),
            kubernetes: KubernetesClaim {
                namespace: "ns".into(),
                serviceaccount: Ref {
                    name: "sa".into(),
                    uid: "u".into(),
                },
            },
        }
    }

    #[test]
    fn tokens_verify_and_fail_as_they_should() {
        let s = Signer::new(vec![7; 32], "https://hub".into());
        let t = s.sign(&claims(1000, "https://hub"));
        assert_eq!(
            s.verify(&t, &[], 500).unwrap().sub,
            "system:serviceaccount:ns:sa"
        );
        assert_eq!(s.verify(&t, &[], 1000), Err(TokenError::Expired));
        assert_eq!(s.verify(&t, &[], 50), Err(TokenError::Expired));
        assert_eq!(
            s.verify(&t, &["other".into()], 500),
            Err(TokenError::Audience)
        );
        let other = Signer::new(vec![8; 32], "https://hub".into());
        assert_eq!(other.verify(&t, &[], 500), Err(TokenError::Signature));
        let mut tampered = t.clone();
        tampered.insert(t.find('.').unwrap() + 3, 'x');
        assert!(s.verify(&tampered, &[], 500).is_err());
        assert_eq!(s.verify("nope", &[], 500), Err(TokenError::Malformed));
        assert!(
            !format!("{s:?}").contains('7'),
            "keys never reach Debug output"
        );
    }
}
