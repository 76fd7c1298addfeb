//! Reading kube-apiserver's `EncryptionConfiguration` (`apiserver.config.k8s.io/v1`).

use base64::Engine;
use serde::Deserialize;

use super::providers::{Key, Provider};
use super::{Encryption, Rule};

/// Why a configuration cannot be used; says which entry and what to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct File {
    api_version: String,
    kind: String,
    #[serde(default)]
    resources: Vec<Resources>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Resources {
    resources: Vec<String>,
    providers: Vec<ProviderSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProviderSpec {
    identity: Option<serde_json::Value>,
    aesgcm: Option<Keys>,
    aescbc: Option<Keys>,
    secretbox: Option<Keys>,
    kms: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keys {
    keys: Vec<KeySpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct KeySpec {
    name: String,
    secret: String,
}

fn err(msg: impl Into<String>) -> ConfigError {
    ConfigError(msg.into())
}

/// Parse the file's text.
pub(super) fn parse(text: &str) -> Result<Encryption, ConfigError> {
    let file: File = serde_yaml::from_str(text)
        .map_err(|e| err(format!("not an EncryptionConfiguration: {e}")))?;
    if file.kind != "EncryptionConfiguration"
        || !matches!(
            file.api_version.as_str(),
            "apiserver.config.k8s.io/v1" | "apiserver.config.k8s.io/v1alpha1"
        )
    {
        return Err(err(format!(
            "kind {:?} of apiVersion {:?}: expected EncryptionConfiguration of \
             apiserver.config.k8s.io/v1",
            file.kind, file.api_version
        )));
    }
    let mut rules = Vec::new();
    for (i, r) in file.resources.into_iter().enumerate() {
        if r.resources.is_empty() {
            return Err(err(format!("resources[{i}]: names no resource")));
        }
        if r.providers.is_empty() {
            return Err(err(format!("resources[{i}]: has no provider")));
        }
        let providers = r
            .providers
            .into_iter()
            .enumerate()
            .map(|(j, p)| {
                provider(p).map_err(|e| err(format!("resources[{i}].providers[{j}]: {e}")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let resources = r.resources.iter().map(|s| s.to_ascii_lowercase()).collect();
        rules.push(Rule {
            resources,
            providers,
        });
    }
    Ok(Encryption { rules })
}

fn provider(p: ProviderSpec) -> Result<Provider, String> {
    let set = [
        p.identity.is_some(),
        p.aesgcm.is_some(),
        p.aescbc.is_some(),
        p.secretbox.is_some(),
        p.kms.is_some(),
    ];
    if set.iter().filter(|s| **s).count() != 1 {
        return Err("exactly one of identity, aesgcm, aescbc, secretbox must be set".into());
    }
    if p.kms.is_some() {
        return Err("kms is not supported by flotilla; use aesgcm, aescbc or secretbox".into());
    }
    if p.identity.is_some() {
        return Ok(Provider::Identity);
    }
    if let Some(k) = p.aesgcm {
        return keys(k, "aesgcm", Provider::aesgcm_key, "16 or 32").map(Provider::AesGcm);
    }
    let fixed = |b: &[u8]| <[u8; 32]>::try_from(b).ok();
    if let Some(k) = p.aescbc {
        return keys(k, "aescbc", fixed, "32").map(Provider::AesCbc);
    }
    let k = p.secretbox.expect("one provider is set");
    keys(k, "secretbox", fixed, "32").map(Provider::SecretBox)
}

fn keys<K>(
    k: Keys,
    kind: &str,
    make: impl Fn(&[u8]) -> Option<K>,
    sizes: &str,
) -> Result<Vec<Key<K>>, String> {
    if k.keys.is_empty() {
        return Err(format!("{kind}: no keys"));
    }
    let mut out: Vec<Key<K>> = Vec::new();
    for spec in k.keys {
        if spec.name.is_empty() || spec.name.contains(':') {
            return Err(format!(
                "{kind}: key name {:?} must be non-empty and without ':'",
                spec.name
            ));
        }
        if out.iter().any(|o| o.name == spec.name) {
            return Err(format!("{kind}: key name {:?} is given twice", spec.name));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(spec.secret.trim())
            .map_err(|_| format!("{kind}: the secret of key {:?} is not base64", spec.name))?;
        let key = make(&bytes).ok_or_else(|| {
            format!(
                "{kind}: the secret of key {:?} is {} bytes; it must be {sizes}",
                spec.name,
                bytes.len()
            )
        })?;
        out.push(Key {
            name: spec.name,
            key,
        });
    }
    Ok(out)
}
