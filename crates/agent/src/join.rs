//! Joining the hub in pull mode, and keeping the agent's own credential.
//!
//! Double opt-in: the member asks (a bootstrap credential lets it create its Cluster and nothing
//! else), the hub's admin accepts (`flotilla cluster approve`). Only then may the bootstrap user
//! request a token for the agent's service account in the execution namespace; that token is the
//! agent's credential from then on, kept in the state directory (`token`, 0600, referenced from
//! `hub.kubeconfig` as a token file so a renewed token is picked up without a restart). Tokens
//! are renewed by the agent itself when half their lifetime has passed (the lifetime the hub
//! granted, which its `--service-account-max-token-expiration` may make shorter than asked),
//! and die at once when the hub removes the cluster (the service account goes with its
//! namespace).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::{Cluster, ClusterSpec, SyncMode, CONDITION_JOINED};
use flotilla_apis::names::{execution_namespace, AGENT_SERVICE_ACCOUNT};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};
use serde_json::{json, Value};

use crate::{Error, Result};

/// The file in the state directory holding the agent's hub kubeconfig.
pub const KUBECONFIG_FILE: &str = "hub.kubeconfig";
/// The file in the state directory holding the agent's token.
pub const TOKEN_FILE: &str = "token";
/// The file in the state directory holding when the token expires (RFC 3339).
pub const EXPIRY_FILE: &str = "token-expiration";

/// How long the agent asks its tokens to live: the hub's default cap on service-account tokens,
/// so a default hub grants it in full. A hub with a lower cap grants less; renewal follows the
/// expiry granted, not this.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// The soonest a renewal is tried again after the last one (also when the expiry is unknown).
const RENEW_AT_LEAST_AFTER: Duration = Duration::from_secs(10);

/// What the member says of itself when it asks to join.
#[derive(Clone, Debug, Default)]
pub struct JoinRequest {
    /// The Cluster name to join as.
    pub cluster: String,
    /// Labels for the Cluster (for placement).
    pub labels: BTreeMap<String, String>,
    /// Region, zone and provider of the member.
    pub region: Option<String>,
    /// See `region`.
    pub zone: Option<String>,
    /// See `region`.
    pub provider: Option<String>,
    /// The CIDRs the member's own DNS queries come from (local-first answers).
    pub networks: Vec<String>,
}

/// The agent's state directory.
#[derive(Clone, Debug)]
pub struct StateDir(pub PathBuf);

impl StateDir {
    fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Has the agent joined before (is its own credential here)?
    pub fn joined(&self) -> bool {
        self.file(KUBECONFIG_FILE).exists() && self.file(TOKEN_FILE).exists()
    }

    /// The client config of the agent's own credential.
    pub async fn config(&self) -> Result<Config> {
        let path = self.file(KUBECONFIG_FILE);
        let kubeconfig = Kubeconfig::read_from(&path)
            .map_err(|e| Error::Credential(format!("reading {}: {e}", path.display())))?;
        Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .map_err(|e| Error::Credential(format!("loading {}: {e}", path.display())))
    }
}

/// Asks to join with the `bootstrap` kubeconfig, waits for approval (calling `waiting` once
/// when it starts to wait), and stores the agent's own credential in `state`.
pub async fn join(
    bootstrap: &Path,
    request: &JoinRequest,
    state: &StateDir,
    waiting: impl FnOnce(),
) -> Result<()> {
    let kubeconfig = Kubeconfig::read_from(bootstrap)
        .map_err(|e| Error::Credential(format!("reading {}: {e}", bootstrap.display())))?;
    let config = Config::from_custom_kubeconfig(kubeconfig.clone(), &KubeConfigOptions::default())
        .await
        .map_err(|e| Error::Credential(format!("loading {}: {e}", bootstrap.display())))?;
    let client = Client::try_from(config.clone())
        .map_err(|e| Error::Credential(format!("a client for {}: {e}", bootstrap.display())))?;
    let name = &request.cluster;
    let clusters: Api<Cluster> = Api::all(client.clone());
    let mut ask = Cluster::new(
        name,
        ClusterSpec {
            sync_mode: SyncMode::Pull,
            region: request.region.clone(),
            zone: request.zone.clone(),
            provider: request.provider.clone(),
            networks: request.networks.clone(),
            ..ClusterSpec::default()
        },
    );
    ask.metadata.labels = Some(request.labels.clone()).filter(|l| !l.is_empty());
    loop {
        match clusters.create(&PostParams::default(), &ask).await {
            Ok(_) => tracing::info!(cluster = %name, "asked the hub to join"),
            // Asked before (a restart while waiting, or a try whose answer was lost): wait on
            // that request.
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) if transient(&e) => {
                tracing::warn!(cluster = %name, error = %e, "asking to join; trying again");
                tokio::time::sleep(RETRY).await;
                continue;
            }
            Err(e) => return Err(bootstrap_error(name, e)),
        }
        break;
    }
    let mut waiting = Some(waiting);
    loop {
        let cluster = match clusters.get(name).await {
            Ok(c) => c,
            Err(e) if transient(&e) => {
                tracing::warn!(cluster = %name, error = %e, "reading the join request; trying again");
                tokio::time::sleep(RETRY).await;
                continue;
            }
            // The request (or the credential it was made with) is gone: removing a pending
            // cluster is how the hub says no.
            Err(kube::Error::Api(s)) if matches!(s.code, 401 | 403 | 404) && waiting.is_none() => {
                return Err(Error::Revoked(format!(
                    "the hub denied the join request of cluster {name:?} (`flotilla cluster remove` \
                     removed it, or its bootstrap credential)"
                )))
            }
            Err(kube::Error::Api(s)) if s.code == 403 => {
                return Err(Error::Revoked(format!(
                    "a Cluster named {name:?} already exists on the hub and was not requested \
                     with this bootstrap credential; pick another --cluster name"
                )))
            }
            Err(e) => return Err(bootstrap_error(name, e)),
        };
        if joined(&cluster) {
            break;
        }
        if let Some(w) = waiting.take() {
            w();
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    // Approval writes the RBAC before it marks the Cluster joined; allow a moment regardless.
    let mut tries = 0;
    let (token, expires) = loop {
        match request_token(&client, name).await {
            Ok(t) => break t,
            Err(e)
                if tries < 10
                    && (transient(&e) || matches!(&e, kube::Error::Api(s) if s.code == 403)) =>
            {
                tries += 1;
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(bootstrap_error(name, e)),
        }
    };
    store(state, &kubeconfig, &token, &expires)?;
    tracing::info!(cluster = %name, dir = %state.0.display(), "joined; credential stored");
    Ok(())
}

/// How long a join waits before trying again after a transient error.
const RETRY: Duration = Duration::from_secs(2);

/// An error worth trying again: the hub overloaded or unreachable for a moment (5xx, 429, no
/// answer), not a refusal.
fn transient(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

fn joined(cluster: &Cluster) -> bool {
    cluster.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == CONDITION_JOINED && c.status == "True")
    })
}

fn bootstrap_error(cluster: &str, e: kube::Error) -> Error {
    match &e {
        kube::Error::Api(s) if s.code == 401 => Error::Revoked(
            "the hub refused the bootstrap credential (expired or deleted); create a new one \
             with `flotilla token create`"
                .into(),
        ),
        kube::Error::Api(s) if s.code == 403 => Error::Revoked(format!(
            "the hub refused to let this bootstrap credential join as {cluster:?}: {}",
            s.message
        )),
        _ => Error::Hub {
            action: format!("asking to join as {cluster:?}"),
            source: e,
        },
    }
}

/// A new token for `cluster`'s agent service account: `(token, expirationTimestamp)`.
async fn request_token(client: &Client, cluster: &str) -> kube::Result<(String, String)> {
    let path = format!(
        "/api/v1/namespaces/{}/serviceaccounts/{AGENT_SERVICE_ACCOUNT}/token",
        execution_namespace(cluster)
    );
    let body = json!({
        "apiVersion": "authentication.k8s.io/v1",
        "kind": "TokenRequest",
        "spec": {"expirationSeconds": TOKEN_LIFETIME.as_secs()},
    });
    let req = http::Request::post(path)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&body).unwrap_or_default())
        .map_err(kube::Error::HttpError)?;
    let answer: Value = client.request(req).await?;
    let field = |f: &str| answer["status"][f].as_str().unwrap_or_default().to_owned();
    Ok((field("token"), field("expirationTimestamp")))
}

/// Writes the token (0600), its expiry and a kubeconfig that reads the token from its file.
fn store(state: &StateDir, bootstrap: &Kubeconfig, token: &str, expires: &str) -> Result<()> {
    std::fs::create_dir_all(&state.0)
        .map_err(|e| Error::Credential(format!("creating {}: {e}", state.0.display())))?;
    write_private(&state.file(TOKEN_FILE), token.as_bytes())?;
    write_private(&state.file(EXPIRY_FILE), expires.as_bytes())?;
    let cluster = bootstrap
        .clusters
        .first()
        .and_then(|c| c.cluster.clone())
        .ok_or_else(|| Error::Credential("the bootstrap kubeconfig names no cluster".into()))?;
    let token_path = state.file(TOKEN_FILE);
    let kubeconfig = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "hub", "cluster": {
            "server": cluster.server,
            "certificate-authority-data": cluster.certificate_authority_data,
        }}],
        "users": [{"name": "agent", "user": {"tokenFile": token_path.to_string_lossy()}}],
        "contexts": [{"name": "hub", "context": {"cluster": "hub", "user": "agent"}}],
        "current-context": "hub",
    });
    let text = serde_yaml::to_string(&kubeconfig)
        .map_err(|e| Error::Credential(format!("encoding the kubeconfig: {e}")))?;
    write_private(&state.file(KUBECONFIG_FILE), text.as_bytes())
}

/// Writes `bytes` to `path` atomically (temp file, then rename) with mode 0600.
fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let tmp = path.with_extension("tmp");
    let write = || -> std::io::Result<()> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut f = options.open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| Error::Credential(format!("writing {}: {e}", path.display())))
}

/// How long to wait before renewing a token that has `left` to live: half of it. Right after a
/// renewal that is half the granted lifetime, whatever the hub capped it to; after a restart it
/// may renew early, never late.
fn renew_after(left: Duration) -> Duration {
    (left / 2).max(RENEW_AT_LEAST_AFTER)
}

/// How long the stored token has left by this machine's clock, never more than its whole
/// lifetime (so a clock far behind the hub's cannot put a renewal off past the expiry by more
/// than the skew within one lifetime).
fn left_by_clock(state: &StateDir) -> Duration {
    let expires = std::fs::read_to_string(state.file(EXPIRY_FILE))
        .ok()
        .and_then(|s| s.trim().parse::<Timestamp>().ok());
    let left = expires.map_or(Duration::ZERO, |at| {
        let secs = at.duration_since(Timestamp::now()).as_secs();
        Duration::from_secs(u64::try_from(secs).unwrap_or(0))
    });
    let token = std::fs::read_to_string(state.file(TOKEN_FILE)).unwrap_or_default();
    granted_lifetime(token.trim()).map_or(left, |whole| left.min(whole))
}

/// The lifetime the hub granted a service-account token: `exp − iat` of its JWT claims, both
/// written with the hub's clock, so timing renewals from it does not depend on this machine's.
fn granted_lifetime(token: &str) -> Option<Duration> {
    use base64::Engine;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    let (iat, exp) = (claims["iat"].as_i64()?, claims["exp"].as_i64()?);
    u64::try_from(exp - iat).ok().map(Duration::from_secs)
}

/// Renews the agent's token through `hub` (its own credential) whenever half its lifetime has
/// passed; runs until the hub refuses (then [`Error::Revoked`]). After a renewal the next one
/// is timed from the new token's lifetime alone (the hub's clock), whatever this machine's
/// clock says; at start, and after a failed renewal, from the stored expiry by this clock.
pub async fn renew_tokens(hub: Client, cluster: &str, state: &StateDir) -> Result<()> {
    let mut wait = renew_after(left_by_clock(state));
    loop {
        tokio::time::sleep(wait).await;
        match request_token(&hub, cluster).await {
            Ok((token, expires)) => {
                write_private(&state.file(TOKEN_FILE), token.as_bytes())?;
                write_private(&state.file(EXPIRY_FILE), expires.as_bytes())?;
                tracing::info!(%cluster, %expires, "renewed the agent's token");
                wait =
                    renew_after(granted_lifetime(&token).unwrap_or_else(|| left_by_clock(state)));
            }
            Err(kube::Error::Api(s)) if s.code == 401 || s.code == 403 => {
                return Err(Error::Revoked(format!(
                    "the hub refused to renew the agent's token: {}",
                    s.message
                )))
            }
            Err(e) => {
                tracing::warn!(%cluster, error = %e, "renewing the agent's token");
                wait = renew_after(left_by_clock(state));
            }
        }
    }
}

#[cfg(test)]
mod tests;
