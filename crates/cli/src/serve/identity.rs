//! One identity for every replica on one PostgreSQL store.
//!
//! Replicas given the same identity key share, through the store record [`RECORD`] (outside
//! `/registry/`, so the API never serves it), the CA certificate and key, the admin token, the
//! service-account signing key and the service-account issuer — sealed with AES-256-GCM under
//! the key (see [`sealed`]). The first replica to start seals what its data directory holds (or
//! generates) and creates the record; every other one, and the first one on later starts, opens
//! it and writes its files into its data directory, replacing local ones that differ. Each
//! replica then issues its own serving certificate from the shared CA (`pki::ensure`), so any
//! replica accepts any token, and a client trusting the CA trusts every replica.

pub(crate) mod sealed;

use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::{bail, Context, Result};
use flotilla_api::access::signing_key;
use flotilla_store::Store;
use serde_json::{json, Value};

use super::pki;
pub(crate) use sealed::IdentityKey;

/// The store key of the sealed identity.
pub(crate) const RECORD: &str = "/flotilla/identity";

/// What replicas share, as it is in a data directory.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Identity {
    /// `ca.crt` (PEM).
    pub ca_cert: String,
    /// `ca.key` (PEM).
    pub ca_key: String,
    /// `admin.token`.
    pub admin_token: String,
    /// The service-account signing key (PEM, [`signing_key::FILE_NAME`]).
    pub signing_key: String,
    /// The `iss` of service-account tokens.
    pub issuer: String,
}

impl Identity {
    fn to_json(&self) -> Vec<u8> {
        json!({
            "caCert": self.ca_cert,
            "caKey": self.ca_key,
            "adminToken": self.admin_token,
            "serviceAccountSigningKey": self.signing_key,
            "serviceAccountIssuer": self.issuer,
        })
        .to_string()
        .into_bytes()
    }

    fn from_json(bytes: &[u8]) -> Result<Identity> {
        let v: Value = serde_json::from_slice(bytes).context("the shared identity is not JSON")?;
        let field = |name: &str| -> Result<String> {
            v.get(name)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .with_context(|| format!("the shared identity has no {name}"))
        };
        Ok(Identity {
            ca_cert: field("caCert")?,
            ca_key: field("caKey")?,
            admin_token: field("adminToken")?,
            signing_key: field("serviceAccountSigningKey")?,
            issuer: field("serviceAccountIssuer")?,
        })
    }

    /// Seal for the store.
    pub(crate) fn seal(&self, key: &IdentityKey) -> Result<Vec<u8>> {
        sealed::seal(key, RECORD, &self.to_json())
    }

    /// Open what [`Identity::seal`] made; the error says which option holds the key.
    pub(crate) fn open(key: &IdentityKey, bytes: &[u8]) -> Result<Identity> {
        let plain = sealed::open(key, RECORD, bytes).map_err(|e| {
            anyhow::anyhow!(
                "cannot open the shared identity ({RECORD} in the store): {e}. Every replica needs \
                 the identity key the first one was given: check --identity-key-file \
                 (FLOTILLA_IDENTITY_KEY_FILE) or FLOTILLA_IDENTITY_KEY"
            )
        })?;
        Identity::from_json(&plain)
    }
}

/// The identity of this replica, by how it was started: shared through `store` when it is
/// PostgreSQL (`postgres`) and a `key` is given (see [`establish`]), else its data directory's.
/// Returns the service-account issuer: the shared one, else `given` (`--service-account-issuer`)
/// or `own` (its address). A replica without the key on a store holding a shared identity is
/// refused, as is one given an issuer other than the shared one.
pub(crate) async fn settle(
    store: &Store,
    postgres: bool,
    key: Option<&IdentityKey>,
    dir: &Path,
    own: &str,
    given: Option<&str>,
) -> Result<String> {
    let issuer = given.unwrap_or(own);
    match (key, postgres) {
        (Some(key), true) => {
            let shared = establish(store, key, dir, issuer).await?;
            if let Some(given) = given.filter(|g| *g != shared) {
                bail!(
                    "--service-account-issuer {given} differs from {shared}, the issuer the \
                     replicas on this store share: drop the flag or give {shared}"
                );
            }
            Ok(shared)
        }
        (None, true) => {
            if store
                .get(RECORD)
                .await
                .context("reading the shared identity from the store")?
                .is_some()
            {
                bail!(
                    "the replicas on this store share an identity: give this one their identity \
                     key with --identity-key-file FILE or FLOTILLA_IDENTITY_KEY"
                );
            }
            tracing::warn!(
                "no identity key (--identity-key-file or FLOTILLA_IDENTITY_KEY): this hub keeps \
                 its CA, admin token and signing key in its data directory, so other replicas on \
                 this store will not accept its tokens nor share its CA"
            );
            Ok(issuer.to_string())
        }
        (Some(_), false) => {
            tracing::warn!(
                "the identity key is unused: only replicas on a PostgreSQL store share an identity"
            );
            Ok(issuer.to_string())
        }
        (None, false) => Ok(issuer.to_string()),
    }
}

/// Make `dir` hold the identity shared through `store`: load it if a replica stored it, else
/// store this data directory's (generated where missing) with `issuer`. Returns the shared
/// issuer. Nothing is written to `dir` when the stored identity does not open.
pub(crate) async fn establish(
    store: &Store,
    key: &IdentityKey,
    dir: &Path,
    issuer: &str,
) -> Result<String> {
    if let Some(record) = store
        .get(RECORD)
        .await
        .context("reading the shared identity from the store")?
    {
        let shared = Identity::open(key, &record.value)?;
        install(&shared, dir)?;
        tracing::info!("loaded the identity shared by the replicas on this store");
        return Ok(shared.issuer);
    }
    let local = local(dir, issuer)?;
    let sealed = local.seal(key)?;
    match store.create(RECORD, Box::new(move |_| sealed.into())).await {
        Ok(_) => {
            tracing::info!(
                "stored this data directory's CA, admin token and signing key as the identity \
                 every replica on this store shares"
            );
            Ok(local.issuer)
        }
        Err(flotilla_store::Error::AlreadyExists { .. }) => {
            // Another replica stored its identity first: take it.
            let record = store
                .get(RECORD)
                .await
                .context("reading the shared identity from the store")?
                .context(
                    "the shared identity vanished from the store after another replica stored it",
                )?;
            let shared = Identity::open(key, &record.value)?;
            install(&shared, dir)?;
            tracing::info!("another replica stored the shared identity first; loaded it");
            Ok(shared.issuer)
        }
        Err(e) => Err(e).context("storing the shared identity"),
    }
}

/// This data directory's identity, creating the CA, the admin token and the signing key where
/// missing.
fn local(dir: &Path, issuer: &str) -> Result<Identity> {
    pki::ensure_authority(dir)?;
    let key_path = dir.join(signing_key::FILE_NAME);
    signing_key::load_or_generate(&key_path)
        .map_err(|e| anyhow::anyhow!("the service account signing key: {e}"))?;
    let read = |name: &str| -> Result<String> {
        let path = dir.join(name);
        fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))
    };
    Ok(Identity {
        ca_cert: read(pki::CA_CERT)?,
        ca_key: read(pki::CA_KEY)?,
        admin_token: read(pki::ADMIN_TOKEN)?.trim().to_string(),
        signing_key: read(signing_key::FILE_NAME)?,
        issuer: issuer.to_string(),
    })
}

/// Write `shared` into `dir`, replacing the files that differ (logging which, never what).
fn install(shared: &Identity, dir: &Path) -> Result<()> {
    let files = [
        (pki::CA_CERT, &shared.ca_cert, 0o644),
        (pki::CA_KEY, &shared.ca_key, 0o600),
        (pki::ADMIN_TOKEN, &shared.admin_token, 0o600),
        (signing_key::FILE_NAME, &shared.signing_key, 0o600),
    ];
    let mut replaced = Vec::new();
    for (name, content, mode) in files {
        let path = dir.join(name);
        let existing = match fs::read_to_string(&path) {
            Ok(s) => Some(s),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        if existing.as_deref() == Some(content.as_str()) {
            continue;
        }
        write_atomic(&path, content, mode)?;
        if existing.is_some() {
            replaced.push(name);
        }
    }
    if !replaced.is_empty() {
        tracing::warn!(
            files = ?replaced,
            "replaced this data directory's credentials with the identity the replicas share: \
             tokens and certificates of the old ones are no longer accepted"
        );
    }
    Ok(())
}

/// Write `data` to `path` with `mode` through a temporary file renamed into place, so a crash
/// never leaves half a key.
fn write_atomic(path: &Path, data: &str, mode: u32) -> Result<()> {
    let Some(name) = path.file_name() else {
        bail!("{} is not a file path", path.display());
    };
    let mut tmp_name = name.to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let write = || -> std::io::Result<()> {
        let _ = fs::remove_file(&tmp);
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)?;
        f.write_all(data.as_bytes())?;
        f.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests;
