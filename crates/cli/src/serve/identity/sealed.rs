//! The identity key and the sealed form of the shared identity.
//!
//! The key replicas are given is any secret text of 32 bytes or more; the AES-256-GCM key is its
//! SHA-256 digest. A sealed record is `VERSION (1 byte) ‖ nonce (12 bytes) ‖ ciphertext ‖ tag
//! (16 bytes)`, the nonce random for every seal, the version byte and the record's store key
//! authenticated as associated data (a record copied under another key does not open).

use std::fmt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, AES_256_GCM, NONCE_LEN};
use ring::rand::{SecureRandom, SystemRandom};

/// The format of sealed records this build writes and reads.
pub(crate) const VERSION: u8 = 1;

/// The shortest key text accepted, in bytes.
pub(crate) const MIN_KEY_LEN: usize = 32;

/// The key every replica is given, already derived (SHA-256 of the text). Never printed.
pub(crate) struct IdentityKey([u8; 32]);

impl fmt::Debug for IdentityKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IdentityKey(…)")
    }
}

impl IdentityKey {
    /// Derive the key from its text, which `origin` names in errors ("the file K", "…"):
    /// whitespace around it is ignored (a file's last newline), and at least [`MIN_KEY_LEN`]
    /// bytes must remain.
    pub(crate) fn from_text(text: &[u8], origin: &str) -> Result<IdentityKey> {
        let text = text.trim_ascii();
        if text.is_empty() {
            bail!("the identity key in {origin} is empty: give {MIN_KEY_LEN} bytes or more of secret text (e.g. head -c 48 /dev/urandom | base64)");
        }
        if text.len() < MIN_KEY_LEN {
            bail!(
                "the identity key in {origin} is {} bytes long: give {MIN_KEY_LEN} bytes or more of \
                 secret text (e.g. head -c 48 /dev/urandom | base64)",
                text.len()
            );
        }
        let digest = ring::digest::digest(&ring::digest::SHA256, text);
        let mut key = [0u8; 32];
        key.copy_from_slice(digest.as_ref());
        Ok(IdentityKey(key))
    }

    /// A key of its own for `purpose`, derived from this one (HMAC-SHA256), so every replica
    /// holding the identity key derives the same.
    pub(crate) fn derive(&self, purpose: &[u8]) -> [u8; 32] {
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &self.0);
        let tag = ring::hmac::sign(&key, purpose);
        let mut out = [0u8; 32];
        out.copy_from_slice(tag.as_ref());
        out
    }

    /// Read the key from `--identity-key-file` or the text of `FLOTILLA_IDENTITY_KEY`; `None`
    /// if neither is given, an error if both are.
    pub(crate) fn from_args(file: Option<&Path>, text: Option<&[u8]>) -> Result<Option<Self>> {
        match (file, text) {
            (Some(_), Some(_)) => bail!(
                "give the identity key once: --identity-key-file (FLOTILLA_IDENTITY_KEY_FILE) or \
                 FLOTILLA_IDENTITY_KEY, not both"
            ),
            (Some(path), None) => {
                let text = std::fs::read(path).with_context(|| {
                    format!("cannot read the identity key file {}", path.display())
                })?;
                Self::from_text(&text, &format!("the file {}", path.display())).map(Some)
            }
            (None, Some(text)) => Self::from_text(text, "FLOTILLA_IDENTITY_KEY").map(Some),
            (None, None) => Ok(None),
        }
    }

    fn aead(&self) -> LessSafeKey {
        LessSafeKey::new(UnboundKey::new(&AES_256_GCM, &self.0).expect("a 32-byte AES-256 key"))
    }
}

/// Why a sealed record did not open.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OpenError {
    /// Shorter than a version byte, a nonce and a tag.
    Truncated,
    /// Written in a format this build does not know (a newer flotilla).
    UnknownVersion(u8),
    /// Authentication failed: another key sealed it, or it was altered.
    WrongKey,
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::Truncated => f.write_str("the record is truncated"),
            OpenError::UnknownVersion(v) => write!(
                f,
                "the record has format version {v}, which this flotilla does not know: upgrade \
                 this replica to the version of the others"
            ),
            OpenError::WrongKey => f.write_str(
                "the record does not decrypt with this identity key (it was sealed with another \
                 key, or altered)",
            ),
        }
    }
}

impl std::error::Error for OpenError {}

/// Encrypt `plain` for the store record `record_key`.
pub(crate) fn seal(key: &IdentityKey, record_key: &str, plain: &[u8]) -> Result<Vec<u8>> {
    let mut nonce = [0u8; NONCE_LEN];
    SystemRandom::new()
        .fill(&mut nonce)
        .map_err(|_| anyhow::anyhow!("the system's random number generator failed"))?;
    let mut out = Vec::with_capacity(1 + NONCE_LEN + plain.len() + AES_256_GCM.tag_len());
    out.push(VERSION);
    out.extend_from_slice(&nonce);
    let mut body = plain.to_vec();
    key.aead()
        .seal_in_place_append_tag(
            Nonce::assume_unique_for_key(nonce),
            Aad::from(aad(record_key)),
            &mut body,
        )
        .map_err(|_| anyhow::anyhow!("encrypting the shared identity failed"))?;
    out.extend_from_slice(&body);
    Ok(out)
}

/// Decrypt what [`seal`] made for `record_key`.
pub(crate) fn open(
    key: &IdentityKey,
    record_key: &str,
    sealed: &[u8],
) -> std::result::Result<Vec<u8>, OpenError> {
    let (&version, rest) = sealed.split_first().ok_or(OpenError::Truncated)?;
    if version != VERSION {
        return Err(OpenError::UnknownVersion(version));
    }
    if rest.len() < NONCE_LEN + AES_256_GCM.tag_len() {
        return Err(OpenError::Truncated);
    }
    let (nonce, body) = rest.split_at(NONCE_LEN);
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| OpenError::Truncated)?;
    let mut body = body.to_vec();
    let plain = key
        .aead()
        .open_in_place(nonce, Aad::from(aad(record_key)), &mut body)
        .map_err(|_| OpenError::WrongKey)?;
    Ok(plain.to_vec())
}

fn aad(record_key: &str) -> Vec<u8> {
    let mut aad = vec![VERSION];
    aad.extend_from_slice(record_key.as_bytes());
    aad
}
