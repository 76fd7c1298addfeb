//! The service-account signing key: ECDSA P-256 (JWS `ES256`), generated at first start and kept
//! in the data directory as a PKCS#8 PEM file, and its public half as a JWK.
//!
//! The key id is Kubernetes' choice: base64url(SHA-256(DER SubjectPublicKeyInfo)), so the same
//! key always has the same `kid` and a verifier can pick the right key after a rotation.

use std::fmt;

use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, KeyPair, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED,
    ECDSA_P256_SHA256_FIXED_SIGNING,
};
use serde_json::{json, Value};

use super::{b64, b64_decode, sha256, Result, TokenError};

const PEM_LABEL: &str = "PRIVATE KEY";

/// DER `SubjectPublicKeyInfo` header for an uncompressed P-256 point (id-ecPublicKey,
/// prime256v1, BIT STRING of 66 bytes); the 65-byte point follows.
const SPKI_P256_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];
/// Length of an uncompressed P-256 point: `0x04 || X || Y`.
const POINT_LEN: usize = 65;

/// The private signing key. `Debug` shows only the key id.
pub struct TokenSigner {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    public: VerificationKey,
}

// === impl TokenSigner ===

impl TokenSigner {
    /// A new random key.
    pub fn generate() -> Result<Self> {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| TokenError::Random)?;
        Self::from_pkcs8(doc.as_ref())
    }

    /// Load the key written by [`TokenSigner::to_pem`] (or any PKCS#8 P-256 key).
    pub fn from_pem(pem: &str) -> Result<Self> {
        let der = decode_pem(pem).map_err(TokenError::ParseKey)?;
        Self::from_pkcs8(&der)
    }

    fn from_pkcs8(der: &[u8]) -> Result<Self> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &SystemRandom::new())
                .map_err(|e| TokenError::ParseKey(e.to_string()))?;
        let public = VerificationKey::from_point(pair.public_key().as_ref())
            .map_err(TokenError::ParseKey)?;
        Ok(TokenSigner {
            pair,
            pkcs8: der.to_vec(),
            public,
        })
    }

    /// The key as a PEM `PRIVATE KEY` block, to write (mode 0600) to the data directory.
    pub fn to_pem(&self) -> String {
        encode_pem(PEM_LABEL, &self.pkcs8)
    }

    /// The key id (`kid`) put in token headers and the JWKS.
    pub fn key_id(&self) -> &str {
        self.public.key_id()
    }

    /// The public half.
    pub fn verification_key(&self) -> &VerificationKey {
        &self.public
    }

    /// An ES256 signature (64 bytes, `r || s`) over `message`.
    pub(super) fn sign(&self, message: &[u8]) -> Result<Vec<u8>> {
        let sig = self
            .pair
            .sign(&SystemRandom::new(), message)
            .map_err(|_| TokenError::Sign)?;
        Ok(sig.as_ref().to_vec())
    }
}

impl fmt::Debug for TokenSigner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenSigner")
            .field("kid", &self.key_id())
            .field("private_key", &"<redacted>")
            .finish()
    }
}

/// A P-256 public key that verifies tokens, with its key id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerificationKey {
    key_id: String,
    point: Vec<u8>,
}

// === impl VerificationKey ===

impl VerificationKey {
    fn from_point(point: &[u8]) -> Result<Self, String> {
        if point.len() != POINT_LEN || point[0] != 0x04 {
            return Err("the public key is not an uncompressed P-256 point".into());
        }
        let mut spki = SPKI_P256_PREFIX.to_vec();
        spki.extend_from_slice(point);
        Ok(VerificationKey {
            key_id: b64(&sha256(&spki)),
            point: point.to_vec(),
        })
    }

    /// Read a JWK (`kty` `EC`, `crv` `P-256`, `x`, `y`); the key id is recomputed from the key,
    /// not trusted from the document.
    pub fn from_jwk(jwk: &Value) -> Result<Self> {
        let bad = |m: &str| TokenError::ParseJwk(m.to_string());
        let field = |name: &str| jwk.get(name).and_then(Value::as_str);
        if field("kty") != Some("EC") || field("crv") != Some("P-256") {
            return Err(bad("kty must be \"EC\" and crv \"P-256\""));
        }
        let coord = |name: &str| {
            field(name)
                .and_then(b64_decode)
                .filter(|c| c.len() == 32)
                .ok_or_else(|| bad(&format!("{name} must be 32 bytes of base64url")))
        };
        let mut point = vec![0x04];
        point.extend(coord("x")?);
        point.extend(coord("y")?);
        // A point off the curve is accepted here and simply never verifies (ring checks it).
        Self::from_point(&point).map_err(|e| bad(&e))
    }

    /// The key id.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The key as a JWK, as kube-apiserver publishes it in `/openid/v1/jwks`.
    pub fn to_jwk(&self) -> Value {
        json!({
            "use": "sig",
            "kty": "EC",
            "kid": self.key_id,
            "crv": "P-256",
            "alg": "ES256",
            "x": b64(&self.point[1..33]),
            "y": b64(&self.point[33..]),
        })
    }

    /// Is `signature` a valid ES256 signature of `message` by this key?
    pub(super) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &self.point)
            .verify(message, signature)
            .is_ok()
    }
}

fn encode_pem(label: &str, der: &[u8]) -> String {
    use base64::Engine;
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    // 64-character lines, as RFC 7468 asks; base64 output is ASCII so byte chunks are chars.
    for line in body.as_bytes().chunks(64) {
        out.push_str(&String::from_utf8_lossy(line));
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

fn decode_pem(pem: &str) -> Result<Vec<u8>, String> {
    use base64::Engine;
    let begin = format!("-----BEGIN {PEM_LABEL}-----");
    let end = format!("-----END {PEM_LABEL}-----");
    let Some(start) = pem.find(&begin) else {
        if pem.contains("-----BEGIN EC PRIVATE KEY-----") {
            return Err("found an SEC1 \"EC PRIVATE KEY\"; convert it with \
                        `openssl pkcs8 -topk8 -nocrypt`"
                .into());
        }
        return Err(format!("no \"{begin}\" line"));
    };
    let rest = &pem[start + begin.len()..];
    let Some(stop) = rest.find(&end) else {
        return Err(format!("no \"{end}\" line"));
    };
    let body: String = rest[..stop]
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(|e| format!("the PEM body is not base64: {e}"))
}
