//! Compact JWS (`header.payload.signature`, base64url without padding) for ES256 only.
//!
//! Deliberately narrow: the header must name `ES256`, may carry `kid` and `typ`, and may not
//! carry `crit` (no extension is understood), so "alg: none" and algorithm-confusion tokens are
//! refused before any key is tried.

use serde_json::{json, Value};

use super::signer::{TokenSigner, VerificationKey};
use super::{b64, b64_decode, Result, TokenError};

/// A token split and decoded, not yet verified.
pub(super) struct Unverified {
    /// `header.payload`, the bytes the signature covers.
    signing_input: String,
    header: Value,
    /// The payload JSON.
    pub(super) payload: Value,
    signature: Vec<u8>,
}

/// Sign `payload` into a compact JWS.
pub(super) fn encode(payload: &Value, signer: &TokenSigner) -> Result<String> {
    encode_with_header(
        &json!({"alg": "ES256", "kid": signer.key_id()}),
        payload,
        signer,
    )
}

/// Sign `payload` under an arbitrary `header` (tests use it to build hostile tokens).
pub(super) fn encode_with_header(
    header: &Value,
    payload: &Value,
    signer: &TokenSigner,
) -> Result<String> {
    let signing_input = format!(
        "{}.{}",
        b64(header.to_string().as_bytes()),
        b64(payload.to_string().as_bytes())
    );
    let signature = signer.sign(signing_input.as_bytes())?;
    Ok(format!("{signing_input}.{}", b64(&signature)))
}

/// Split and decode without checking the signature.
pub(super) fn decode(token: &str) -> Result<Unverified> {
    let mut parts = token.split('.');
    let (Some(h), Some(p), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(TokenError::Malformed("expected three dot-separated parts"));
    };
    let json = |part: &str, what: &'static str| -> Result<Value> {
        let bytes = b64_decode(part).ok_or(TokenError::Malformed(what))?;
        let v: Value = serde_json::from_slice(&bytes).map_err(|_| TokenError::Malformed(what))?;
        v.is_object()
            .then_some(v)
            .ok_or(TokenError::Malformed(what))
    };
    let header = json(h, "the header is not base64url JSON object")?;
    let payload = json(p, "the payload is not a base64url JSON object")?;
    let signature = b64_decode(s).ok_or(TokenError::Malformed("the signature is not base64url"))?;
    Ok(Unverified {
        signing_input: format!("{h}.{p}"),
        header,
        payload,
        signature,
    })
}

impl Unverified {
    /// Check the header and the signature against `keys` (the one named by `kid` when present).
    pub(super) fn verify(&self, keys: &[VerificationKey]) -> Result<()> {
        let alg = self.header.get("alg").and_then(Value::as_str).unwrap_or("");
        if alg != "ES256" {
            return Err(TokenError::Algorithm(alg.to_string()));
        }
        if self.header.get("crit").is_some() {
            return Err(TokenError::Malformed("the header has critical extensions"));
        }
        let kid = self.header.get("kid").and_then(Value::as_str);
        let ok = keys
            .iter()
            .filter(|k| kid.is_none_or(|kid| k.key_id() == kid))
            .any(|k| k.verifies(self.signing_input.as_bytes(), &self.signature));
        if ok {
            Ok(())
        } else {
            Err(TokenError::Signature)
        }
    }
}
