//! The ciphers: one [`Provider`] per entry of a resource's `providers` list, holding its keys.

use aes::cipher::{block_padding::Pkcs7, BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use crypto_secretbox::aead::{Aead, KeyInit};
use crypto_secretbox::XSalsa20Poly1305;
use rand::RngCore;
use ring::aead::{self, Aad, LessSafeKey, Nonce, UnboundKey};

use super::PREFIX;

type Aes256CbcEnc = cbc::Encryptor<aes::Aes256>;
type Aes256CbcDec = cbc::Decryptor<aes::Aes256>;

/// One named key of a provider.
pub(super) struct Key<K> {
    pub name: String,
    pub key: K,
}

/// A provider of an `EncryptionConfiguration`.
pub(super) enum Provider {
    Identity,
    AesGcm(Vec<Key<LessSafeKey>>),
    AesCbc(Vec<Key<[u8; 32]>>),
    SecretBox(Vec<Key<[u8; 32]>>),
}

impl Provider {
    pub fn secretbox(name: &str, key: &[u8; 32]) -> Provider {
        Provider::SecretBox(vec![Key {
            name: name.into(),
            key: *key,
        }])
    }

    /// An `aesgcm` key from its bytes (16 or 32).
    pub fn aesgcm_key(bytes: &[u8]) -> Option<LessSafeKey> {
        let algorithm = match bytes.len() {
            16 => &aead::AES_128_GCM,
            32 => &aead::AES_256_GCM,
            _ => return None,
        };
        UnboundKey::new(algorithm, bytes).ok().map(LessSafeKey::new)
    }

    pub fn is_identity(&self) -> bool {
        matches!(self, Provider::Identity)
    }

    /// Its name in a sealed value's prefix.
    pub fn kind(&self) -> &'static str {
        match self {
            Provider::Identity => "identity",
            Provider::AesGcm(_) => "aesgcm",
            Provider::AesCbc(_) => "aescbc",
            Provider::SecretBox(_) => "secretbox",
        }
    }

    fn names(&self) -> Vec<&str> {
        match self {
            Provider::Identity => Vec::new(),
            Provider::AesGcm(k) => k.iter().map(|k| k.name.as_str()).collect(),
            Provider::AesCbc(k) | Provider::SecretBox(k) => {
                k.iter().map(|k| k.name.as_str()).collect()
            }
        }
    }

    /// The name of the key that seals.
    pub fn first_name(&self) -> &str {
        self.names().first().copied().unwrap_or_default()
    }

    pub fn holds(&self, name: &str) -> bool {
        self.names().contains(&name)
    }

    /// `plain` sealed with this provider's first key, with the prefix naming it; `key` is the
    /// storage key (authenticated by AES-GCM).
    pub fn seal(&self, key: &str, plain: &[u8]) -> Vec<u8> {
        let name = self.first_name().to_owned();
        let mut out = Vec::with_capacity(plain.len() + 64);
        out.extend_from_slice(PREFIX);
        out.extend_from_slice(format!("{}:v1:{name}:", self.kind()).as_bytes());
        match self {
            Provider::Identity => out = plain.to_vec(),
            Provider::AesGcm(keys) => {
                let mut nonce = [0u8; aead::NONCE_LEN];
                rand::thread_rng().fill_bytes(&mut nonce);
                let mut sealed = plain.to_vec();
                keys[0]
                    .key
                    .seal_in_place_append_tag(
                        Nonce::assume_unique_for_key(nonce),
                        Aad::from(key.as_bytes()),
                        &mut sealed,
                    )
                    .expect("AES-GCM seals any length the store takes");
                out.extend_from_slice(&nonce);
                out.extend_from_slice(&sealed);
            }
            Provider::AesCbc(keys) => {
                let mut iv = [0u8; 16];
                rand::thread_rng().fill_bytes(&mut iv);
                let sealed = Aes256CbcEnc::new(&keys[0].key.into(), &iv.into())
                    .encrypt_padded_vec_mut::<Pkcs7>(plain);
                out.extend_from_slice(&iv);
                out.extend_from_slice(&sealed);
            }
            Provider::SecretBox(keys) => {
                let mut nonce = [0u8; 24];
                rand::thread_rng().fill_bytes(&mut nonce);
                let sealed = XSalsa20Poly1305::new(&keys[0].key.into())
                    .encrypt(&nonce.into(), plain)
                    .expect("secretbox seals any length the store takes");
                out.extend_from_slice(&nonce);
                out.extend_from_slice(&sealed);
            }
        }
        out
    }

    /// The clear bytes of `sealed` (after the prefix) under the key `name`, or `None` when it
    /// does not open.
    pub fn open(&self, name: &str, key: &str, sealed: &[u8]) -> Option<Vec<u8>> {
        match self {
            Provider::Identity => Some(sealed.to_vec()),
            Provider::AesGcm(keys) => {
                let k = keys.iter().find(|k| k.name == name)?;
                if sealed.len() < aead::NONCE_LEN {
                    return None;
                }
                let (nonce, rest) = sealed.split_at(aead::NONCE_LEN);
                let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
                let mut buf = rest.to_vec();
                let plain = k
                    .key
                    .open_in_place(nonce, Aad::from(key.as_bytes()), &mut buf)
                    .ok()?;
                Some(plain.to_vec())
            }
            Provider::AesCbc(keys) => {
                let k = keys.iter().find(|k| k.name == name)?;
                if sealed.len() < 16 {
                    return None;
                }
                let (iv, rest) = sealed.split_at(16);
                let iv: [u8; 16] = iv.try_into().ok()?;
                Aes256CbcDec::new(&k.key.into(), &iv.into())
                    .decrypt_padded_vec_mut::<Pkcs7>(rest)
                    .ok()
            }
            Provider::SecretBox(keys) => {
                let k = keys.iter().find(|k| k.name == name)?;
                if sealed.len() < 24 {
                    return None;
                }
                let (nonce, rest) = sealed.split_at(24);
                let nonce: [u8; 24] = nonce.try_into().ok()?;
                XSalsa20Poly1305::new(&k.key.into())
                    .decrypt(&nonce.into(), rest)
                    .ok()
            }
        }
    }
}
