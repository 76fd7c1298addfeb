//! The data directory is private to the hub's user: it holds the CA key, the admin token and
//! kubeconfig, the service-account signing key and (on SQLite) every object, Secrets included.
//!
//! The directory is created 0700 and secret files are written 0600 (`pki::write_private`, the
//! signing key, the SQLite store); a directory or file an earlier version, or a hand, left open
//! to other users is tightened at every start, with a log line saying what changed.

use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use anyhow::{Context, Result};

/// Secret files in the data directory. `ca.crt` is public; the serving key is never written.
/// `serviceaccount.key` is an earlier hub's signing key, unused but still a secret.
const SECRET_FILES: &[&str] = &[
    "ca.key",
    "admin.token",
    "admin.kubeconfig",
    flotilla_api::access::signing_key::FILE_NAME,
    "serviceaccount.key",
    super::encryption::KEY_FILE,
];

/// Create `dir` (its parents as usual, itself 0700), or tighten it if it exists.
pub fn private_dir(dir: &Path) -> Result<()> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)
            .with_context(|| format!("cannot create directory {}", parent.display()))?;
    }
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {
            tighten(dir, "data directory");
            Ok(())
        }
        Err(e) => Err(e).with_context(|| format!("cannot create data directory {}", dir.display())),
    }
}

/// Tighten the secret files that exist in `dir`.
pub fn private_files(dir: &Path) {
    for name in SECRET_FILES {
        tighten(&dir.join(name), "secret file");
    }
}

fn tighten(path: &Path, what: &str) {
    flotilla_store::private::tighten(path, what);
}

#[cfg(test)]
mod tests;
