//! Fairness: one ServiceAccount floods the server with LISTs (open loop, 2,000/s in the full
//! run) while another user's GETs (100/s) are timed. The target is the other user's
//! GET p99 ≤ 20 ms; kube-apiserver answers the same load with its API Priority and Fairness.
//!
//! Both users are ServiceAccounts bound to a reader Role in the listed namespace, with tokens from
//! the TokenRequest API, so the same requests run on flotilla and on kube-apiserver.

use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use indicatif::ProgressBar;
use serde_json::{json, Value};

use super::super::client::Client;
use super::latency::{self, OpenLoop};

/// The calm user's GETs per second.
pub const CALM_RATE: u64 = 100;

/// What the two users saw.
pub struct Fairness {
    /// The flooding ServiceAccount's LISTs.
    pub flood: OpenLoop,
    /// The other user's GETs.
    pub calm: OpenLoop,
}

/// Creates ServiceAccount `name` in `ns` bound to a Role that reads ConfigMaps there, and a
/// client with its token. (A Role of its own rather than the aggregated `view`, whose rules a
/// kube-controller-manager without the aggregation controller never fills.)
async fn service_account(admin: &Client, ns: &str, name: &str) -> Result<Client> {
    let post = |path: String, body: Value| {
        let admin = admin.clone();
        async move {
            admin
                .post(&path, Bytes::from(serde_json::to_vec(&body)?))
                .await
                .with_context(|| format!("POST {path}"))
        }
    };
    post(
        format!("/api/v1/namespaces/{ns}/serviceaccounts"),
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}),
    )
    .await?;
    post(
        format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles"),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
        }),
    )
    .await?;
    post(
        format!("/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings"),
        json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
        }),
    )
    .await?;
    let answer = post(
        format!("/api/v1/namespaces/{ns}/serviceaccounts/{name}/token"),
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
               "spec": {"expirationSeconds": 3600}}),
    )
    .await?;
    let answer: Value = serde_json::from_slice(&answer).context("a TokenRequest answer")?;
    let token = answer["status"]["token"]
        .as_str()
        .context("the TokenRequest answer holds no token")?;
    admin.with_token(token, 1)
}

/// Floods LISTs of `list_path` at `rate` as one ServiceAccount while another GETs
/// `get_paths` at [`CALM_RATE`], both for `duration`.
pub async fn run(
    admin: &Client,
    ns: &str,
    list_path: String,
    get_paths: Vec<String>,
    rate: u64,
    duration: Duration,
    bar: &ProgressBar,
) -> Result<Fairness> {
    let flood = service_account(admin, ns, "bench-flood").await?;
    let calm = service_account(admin, ns, "bench-calm").await?;
    // RBAC bindings reach kube-apiserver's authorizer through its informers: wait until the
    // calm user may read.
    let probe = get_paths
        .first()
        .context("nothing for the calm user to GET")?;
    let mut tries = 0;
    while calm.get(probe).await.is_err() {
        tries += 1;
        anyhow::ensure!(tries < 100, "the calm ServiceAccount cannot GET {probe}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (flood, calm) = tokio::join!(
        latency::get(&flood, vec![list_path], rate, duration, bar),
        latency::get(&calm, get_paths, CALM_RATE, duration, bar),
    );
    Ok(Fairness {
        flood: flood.context("the flooding user's LISTs")?,
        calm: calm.context("the other user's GETs")?,
    })
}
