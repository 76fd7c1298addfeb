//! `flotilla serve`'s encryption at rest: the `--encryption-provider-config` file, or by default
//! Secrets sealed with a key of the hub's own (see `flotilla_api::encryption`).
//!
//! The default key: with an identity key (replicas sharing a PostgreSQL store), derived from it,
//! so every replica opens what any other sealed; otherwise 32 random bytes kept in
//! `DATA_DIR/encryption.key` (0600), made at first start. Losing that file loses the Secrets.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use base64::Engine;
use flotilla_api::encryption::Encryption;
use rand::RngCore;

use super::identity::IdentityKey;

/// The file of the default key in the data directory.
pub(crate) const KEY_FILE: &str = "encryption.key";

/// The encryption the hub runs with.
pub(crate) fn choose(
    config: Option<&Path>,
    dir: &Path,
    identity: Option<&IdentityKey>,
) -> Result<Arc<Encryption>> {
    if let Some(file) = config {
        let enc = Encryption::from_file(file).with_context(|| {
            format!(
                "--encryption-provider-config {}: fix the EncryptionConfiguration",
                file.display()
            )
        })?;
        tracing::info!(file = %file.display(), sealing = enc.is_enabled(), "encryption at rest from the configuration file");
        return Ok(Arc::new(enc));
    }
    let key = match identity {
        Some(identity) => identity.derive(b"flotilla encryption at rest v1"),
        None => own_key(&dir.join(KEY_FILE))?,
    };
    tracing::info!("Secrets are encrypted at rest (secretbox) with the hub's own key");
    Ok(Arc::new(Encryption::secrets_with("flotilla-default", &key)))
}

/// The key in `path`, made there (base64 of 32 random bytes) when absent.
fn own_key(path: &Path) -> Result<[u8; 32]> {
    let engine = base64::engine::general_purpose::STANDARD;
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let bytes = engine.decode(text.trim()).ok();
            bytes
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .with_context(|| {
                    format!(
                        "{} is not a key of 32 bytes in base64: restore it from a backup (the \
                         Secrets in the store are encrypted with it)",
                        path.display()
                    )
                })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut key = [0u8; 32];
            rand::thread_rng().fill_bytes(&mut key);
            super::pki::write_private(path, &format!("{}\n", engine.encode(key)))?;
            tracing::info!(file = %path.display(), "made the key that encrypts Secrets at rest; back it up with the database");
            Ok(key)
        }
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}
