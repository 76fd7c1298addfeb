//! The token cleaner: deletes bootstrap tokens once they expire, as kube-controller-manager's
//! tokencleaner does. An expired token no longer authenticates anyway; this keeps
//! `flotilla-system` from filling with dead credentials.

use std::time::Duration;

use flotilla_apis::names::{BOOTSTRAP_TOKEN_TYPE, SYSTEM_NAMESPACE};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, Preconditions};
use kube::{Api, Client, ResourceExt};

/// How often expired tokens are looked for.
const EVERY: Duration = Duration::from_secs(60);

/// Runs until dropped.
pub async fn run(hub: Client) {
    let secrets: Api<Secret> = Api::namespaced(hub, SYSTEM_NAMESPACE);
    let mut tick = tokio::time::interval(EVERY);
    loop {
        tick.tick().await;
        if let Err(e) = sweep(&secrets, Timestamp::now()).await {
            tracing::warn!(error = %e, "cleaning expired bootstrap tokens");
        }
    }
}

async fn sweep(secrets: &Api<Secret>, now: Timestamp) -> kube::Result<()> {
    let params = ListParams::default().fields(&format!("type={BOOTSTRAP_TOKEN_TYPE}"));
    for secret in secrets.list(&params).await?.items {
        if !expired(&secret, now) {
            continue;
        }
        let name = secret.name_any();
        // Only the Secret as read: a token renewed meanwhile is kept.
        let dp = DeleteParams {
            preconditions: Some(Preconditions {
                uid: secret.uid(),
                resource_version: secret.resource_version(),
            }),
            ..DeleteParams::default()
        };
        match secrets.delete(&name, &dp).await {
            Ok(_) => tracing::info!(secret = %name, "deleted an expired bootstrap token"),
            Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Has the token's `expiration` passed? (No expiration: never.)
fn expired(secret: &Secret, now: Timestamp) -> bool {
    if secret.type_.as_deref() != Some(BOOTSTRAP_TOKEN_TYPE) {
        return false;
    }
    secret
        .data
        .as_ref()
        .and_then(|d| d.get("expiration"))
        .and_then(|v| std::str::from_utf8(&v.0).ok())
        .and_then(|s| s.trim().parse::<Timestamp>().ok())
        .is_some_and(|at| at <= now)
}

#[cfg(test)]
mod tests;
