//! Read what the benchmark needs from a kubeconfig: the server URL, the CA to trust and the
//! credentials of the current context (a bearer token or a client certificate).
//!
//! Only the subset the benchmark uses is understood; anything that needs a plugin (exec,
//! auth-provider) is refused with a message saying what to use instead.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use base64::Engine;
use serde::Deserialize;

/// One API server and how to authenticate to it.
#[derive(Clone, Debug, PartialEq)]
pub struct Target {
    /// `https://host:port`, without a trailing slash.
    pub server: String,
    /// The CA certificates to trust (PEM).
    pub ca_pem: Vec<u8>,
    /// How to authenticate.
    pub auth: Auth,
}

/// Credentials from the kubeconfig's user.
#[derive(Clone, PartialEq)]
pub enum Auth {
    /// `Authorization: Bearer TOKEN`.
    Token(String),
    /// A TLS client certificate and its key (PEM).
    ClientCert { cert_pem: Vec<u8>, key_pem: Vec<u8> },
}

impl std::fmt::Debug for Auth {
    // Never print secrets, not even in a debug message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Auth::Token(_) => f.write_str("Token(…)"),
            Auth::ClientCert { .. } => f.write_str("ClientCert(…)"),
        }
    }
}

#[derive(Deserialize)]
struct Kubeconfig {
    #[serde(default)]
    clusters: Vec<NamedCluster>,
    #[serde(default)]
    users: Vec<NamedUser>,
    #[serde(default)]
    contexts: Vec<NamedContext>,
    #[serde(rename = "current-context", default)]
    current_context: Option<String>,
}

#[derive(Deserialize)]
struct NamedCluster {
    name: String,
    cluster: Cluster,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct Cluster {
    server: String,
    certificate_authority_data: Option<String>,
    certificate_authority: Option<PathBuf>,
}

#[derive(Deserialize)]
struct NamedUser {
    name: String,
    user: User,
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
struct User {
    token: Option<String>,
    #[serde(rename = "tokenFile")]
    token_file: Option<PathBuf>,
    client_certificate_data: Option<String>,
    client_key_data: Option<String>,
    client_certificate: Option<PathBuf>,
    client_key: Option<PathBuf>,
    exec: Option<serde_yaml::Value>,
    auth_provider: Option<serde_yaml::Value>,
}

#[derive(Deserialize)]
struct NamedContext {
    name: String,
    context: ContextRef,
}

#[derive(Deserialize)]
struct ContextRef {
    cluster: String,
    user: String,
}

/// Read the current context of the kubeconfig at `path`.
pub fn read(path: &Path) -> Result<Target> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    parse(&text, base).with_context(|| format!("in the kubeconfig {}", path.display()))
}

/// Parse a kubeconfig; relative file paths in it are relative to `base` (as kubectl does).
pub fn parse(text: &str, base: &Path) -> Result<Target> {
    let cfg: Kubeconfig = serde_yaml::from_str(text).context("not a valid kubeconfig")?;
    let (cluster, user) = select(&cfg)?;
    let file = |p: &Path| {
        let p = base.join(p);
        std::fs::read(&p).with_context(|| format!("cannot read {}", p.display()))
    };
    let ca_pem = match (
        &cluster.certificate_authority_data,
        &cluster.certificate_authority,
    ) {
        (Some(data), _) => decode(data).context("certificate-authority-data is not base64")?,
        (None, Some(path)) => file(path)?,
        (None, None) => bail!(
            "the cluster has no certificate-authority-data or certificate-authority: the \
             benchmark trusts only the kubeconfig's CA, so add it"
        ),
    };
    let client_cert = match (&user.client_certificate_data, &user.client_certificate) {
        (Some(d), _) => Some(decode(d).context("client-certificate-data is not base64")?),
        (None, Some(p)) => Some(file(p)?),
        (None, None) => None,
    };
    let auth = if let Some(token) = &user.token {
        Auth::Token(token.trim().to_string())
    } else if let Some(path) = &user.token_file {
        Auth::Token(String::from_utf8_lossy(&file(path)?).trim().to_string())
    } else if let Some(cert_pem) = client_cert {
        let key_pem = match (&user.client_key_data, &user.client_key) {
            (Some(d), _) => decode(d).context("client-key-data is not base64")?,
            (None, Some(p)) => file(p)?,
            (None, None) => bail!("the user has a client certificate but no client key"),
        };
        Auth::ClientCert { cert_pem, key_pem }
    } else if user.exec.is_some() || user.auth_provider.is_some() {
        bail!(
            "the user authenticates with an exec or auth-provider plugin, which the benchmark \
             does not run: give it a kubeconfig with a token (e.g. from `kubectl create token`) \
             or a client certificate"
        )
    } else {
        bail!("the user has no token or client certificate")
    };
    Ok(Target {
        server: cluster.server.trim_end_matches('/').to_string(),
        ca_pem,
        auth,
    })
}

/// The cluster and user of the current context, or of the only/first entries when the file
/// names no context (as the hub's admin.kubeconfig does not need to).
fn select(cfg: &Kubeconfig) -> Result<(&Cluster, &User)> {
    let (cluster_name, user_name) = match &cfg.current_context {
        Some(name) if !name.is_empty() => {
            let ctx = cfg
                .contexts
                .iter()
                .find(|c| &c.name == name)
                .with_context(|| format!("current-context {name:?} is not among the contexts"))?;
            (Some(&ctx.context.cluster), Some(&ctx.context.user))
        }
        _ => (None, None),
    };
    let cluster = match cluster_name {
        Some(n) => cfg.clusters.iter().find(|c| &c.name == n),
        None => cfg.clusters.first(),
    }
    .context("the kubeconfig names no cluster for the current context")?;
    let user = match user_name {
        Some(n) => cfg.users.iter().find(|u| &u.name == n),
        None => cfg.users.first(),
    }
    .context("the kubeconfig names no user for the current context")?;
    Ok((&cluster.cluster, &user.user))
}

fn decode(data: &str) -> Result<Vec<u8>> {
    let compact: String = data.split_whitespace().collect();
    Ok(base64::engine::general_purpose::STANDARD.decode(compact)?)
}

#[cfg(test)]
mod tests;
