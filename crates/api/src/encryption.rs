//! Encryption at rest: what the store holds of the resources an `EncryptionConfiguration`
//! (kube-apiserver's file, `apiserver.config.k8s.io/v1`) names is sealed, so a raw read of the
//! database never shows, say, a Secret's data.
//!
//! Providers as kube-apiserver's: `aesgcm` (AES-GCM, 16- or 32-byte keys), `aescbc` (AES-256-CBC
//! with PKCS#7 padding), `secretbox` (XSalsa20-Poly1305, 32-byte keys) and `identity` (clear);
//! `kms` is refused (no plugin here). For each resource the first provider writes; every
//! provider's keys read, so a key is rotated by listing a new one first and rewriting the
//! objects (`kubectl get secrets -A -o json | kubectl replace -f -`). A sealed value is
//! `k8s:enc:<provider>:v1:<key name>:` and the provider's bytes; a value without the prefix is
//! read as clear (objects stored before encryption was turned on). AES-GCM authenticates the
//! storage key too, so a sealed value moved under another key does not open.
//!
//! The seal happens in the store's writer once the revision is known (the stored JSON holds
//! the resourceVersion); what the watch cache keeps, and serves, is clear.

mod config;
mod providers;
#[cfg(test)]
mod tests;

use std::path::Path;

use bytes::Bytes;

pub use config::ConfigError;
use providers::Provider;

/// Prefix of every sealed value.
const PREFIX: &[u8] = b"k8s:enc:";

/// The encryption of the hub's stored objects, by resource.
#[derive(Default)]
pub struct Encryption {
    rules: Vec<Rule>,
}

/// Names the resources and providers, never a key.
impl std::fmt::Debug for Encryption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut list = f.debug_list();
        for r in &self.rules {
            let kinds: Vec<_> = r.providers.iter().map(|p| p.kind()).collect();
            list.entry(&(&r.resources, kinds));
        }
        list.finish()
    }
}

/// One `resources` entry: the group-resources it names and their providers, the writer first.
struct Rule {
    resources: Vec<String>,
    providers: Vec<Provider>,
}

impl Encryption {
    /// Read an `EncryptionConfiguration` file.
    pub fn from_file(path: &Path) -> Result<Encryption, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError(format!("{e}")))?;
        config::parse(&text)
    }

    /// Secrets sealed with `secretbox` under `key` (32 bytes), named `name`: the hub's default
    /// without a configuration file.
    pub fn secrets_with(name: &str, key: &[u8; 32]) -> Encryption {
        Encryption {
            rules: vec![Rule {
                resources: vec!["secrets".into()],
                providers: vec![Provider::secretbox(name, key)],
            }],
        }
    }

    /// Whether anything is sealed at all.
    pub fn is_enabled(&self) -> bool {
        self.rules.iter().any(|r| !r.providers[0].is_identity())
    }

    /// The provider that writes the object at storage key `key`, if it is sealed.
    fn writer(&self, key: &str) -> Option<&Provider> {
        // Asked for every write and every change the cache applies: nothing to work out when
        // nothing is configured.
        if self.rules.is_empty() {
            return None;
        }
        let (group, resource) = group_resource(key)?;
        let rule = self
            .rules
            .iter()
            .find(|r| r.resources.iter().any(|m| matches(m, group, resource)))?;
        Some(&rule.providers[0]).filter(|p| !p.is_identity())
    }

    /// Whether writes at storage key `key` are sealed.
    pub fn seals(&self, key: &str) -> bool {
        self.writer(key).is_some()
    }

    /// `plain`, to be stored at `key`: sealed by the first provider of its resource, or as is.
    pub fn seal(&self, key: &str, plain: Bytes) -> Bytes {
        match self.writer(key) {
            Some(p) => p.seal(key, &plain).into(),
            None => plain,
        }
    }

    /// Whether `stored` at `key` is not as a write would store it now (clear where the first
    /// provider seals, or sealed with another key): an update that changes nothing still
    /// rewrites it, which is how `kubectl replace` moves objects to a rotated key.
    pub fn is_stale(&self, key: &str, stored: &[u8]) -> bool {
        let current = match self.writer(key) {
            Some(p) => format!("k8s:enc:{}:v1:{}:", p.kind(), p.first_name()),
            None => return stored.starts_with(PREFIX),
        };
        !stored.starts_with(current.as_bytes())
    }

    /// What is stored at `key`, in clear. A value sealed under a key no provider holds (or
    /// tampered with) is an error naming the provider and key, never the data.
    pub fn open(&self, key: &str, stored: Bytes) -> Result<Bytes, String> {
        let Some(rest) = stored.strip_prefix(PREFIX) else {
            return Ok(stored);
        };
        let mut fields = rest.splitn(4, |b| *b == b':');
        let (Some(kind), Some(_version), Some(name), Some(sealed)) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            return Err(format!(
                "{key}: a sealed value without provider and key name"
            ));
        };
        let (kind, name) = (String::from_utf8_lossy(kind), String::from_utf8_lossy(name));
        let mut known = false;
        for p in self.rules.iter().flat_map(|r| &r.providers) {
            if p.kind() == kind && p.holds(&name) {
                known = true;
                if let Some(plain) = p.open(&name, key, sealed) {
                    return Ok(plain.into());
                }
            }
        }
        Err(if known {
            format!("{key}: the {kind} key {name:?} does not open the stored value")
        } else {
            format!("{key}: sealed with the {kind} key {name:?}, which the encryption configuration does not hold")
        })
    }
}

/// The group (`""` for the core group, stored as `core`) and resource of a storage key
/// `/registry/<group>/<resource>/…`.
fn group_resource(key: &str) -> Option<(&str, &str)> {
    let mut parts = key.strip_prefix("/registry/")?.split('/');
    let (group, resource) = (parts.next()?, parts.next()?);
    Some((if group == "core" { "" } else { group }, resource))
}

/// kube-apiserver's matching of a configured resource: exact (`secrets`, `deployments.apps`),
/// `*.GROUP` (every resource of a group; `*.` the core group) or `*.*` (all).
fn matches(pattern: &str, group: &str, resource: &str) -> bool {
    if pattern == "*.*" {
        return true;
    }
    if let Some(g) = pattern.strip_prefix("*.") {
        return g == group;
    }
    match pattern.split_once('.') {
        Some((r, g)) => r == resource && g == group,
        None => group.is_empty() && pattern == resource,
    }
}
