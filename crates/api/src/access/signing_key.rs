//! The service-account signing key on disk: a PKCS#8 PEM file in the data directory, generated
//! at first start (mode 0600) and loaded on every start after, so tokens outlive restarts.
//!
//! Earlier hubs signed tokens with an HMAC key in `serviceaccount.key`; that file is left alone
//! and unused, and the tokens it signed are no longer accepted.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

use crate::auth::TokenSigner;
use crate::error::{ApiError, Result};

/// The key's file name in the data directory.
pub const FILE_NAME: &str = "sa-signing-key.pem";

/// Load the key at `path`, or generate one there if there is none.
pub fn load_or_generate(path: &Path) -> Result<TokenSigner> {
    match fs::read_to_string(path) {
        Ok(pem) => {
            warn_if_exposed(path);
            TokenSigner::from_pem(&pem)
                .map_err(|e| ApiError::internal(format!("cannot use {}: {e}", path.display())))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => generate(path),
        Err(e) => Err(ApiError::internal(format!(
            "cannot read the service account signing key {}: {e}",
            path.display()
        ))),
    }
}

fn generate(path: &Path) -> Result<TokenSigner> {
    let signer = TokenSigner::generate()
        .map_err(|e| ApiError::internal(format!("generating a signing key: {e}")))?;
    // Written aside and renamed into place, so a crash never leaves half a key behind.
    let tmp = path.with_extension("pem.tmp");
    let write = || -> std::io::Result<()> {
        let _ = fs::remove_file(&tmp);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(signer.to_pem().as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        ApiError::internal(format!(
            "cannot write the service account signing key {}: {e}; check that the data \
             directory is writable",
            path.display()
        ))
    })?;
    tracing::info!(
        path = %path.display(),
        kid = signer.key_id(),
        "generated a new service account signing key; tokens signed by an earlier key are no \
         longer accepted"
    );
    Ok(signer)
}

fn warn_if_exposed(path: &Path) {
    if let Ok(meta) = fs::metadata(path) {
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            tracing::warn!(
                path = %path.display(),
                mode = format!("{mode:o}"),
                "the service account signing key is readable by other users; run chmod 600 on it"
            );
        }
    }
}

#[cfg(test)]
mod tests;
