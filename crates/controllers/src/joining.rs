//! The joining controller: a Cluster that asked to join and has no answer yet is marked
//! `Joined=False` with reason `PendingApproval` (so `kubectl get clusters` shows it waiting), or
//! approved at once when the hub runs with `--auto-approve` (labs and tests). Once the agent
//! holds its own credential, the join is completed (`completion`).
//!
//! Once per start of the controller, the agent RBAC of every joined pull cluster is re-applied
//! ([`registry::refresh_agent_rbac`]): clusters approved by an older hub get the rules added
//! since, so upgrading the hub needs no re-approval.

mod completion;

use std::collections::HashSet;
use std::sync::Arc;

use flotilla_apis::cluster::v1alpha1::{
    Cluster, SyncMode, CONDITION_JOINED, REASON_PENDING_APPROVAL,
};
use flotilla_apis::conditions::{self, Set};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, ResourceExt};
use parking_lot::Mutex;
use serde_json::json;

use crate::registry;

/// Runs until dropped.
pub async fn run(hub: Client, auto_approve: bool) {
    tokio::join!(
        answer_requests(hub.clone(), auto_approve),
        completion::run(hub)
    );
}

/// The uids of the clusters whose agent RBAC this run of the controller has re-applied.
type Refreshed = Arc<Mutex<HashSet<String>>>;

async fn answer_requests(hub: Client, auto_approve: bool) {
    let clusters: Api<Cluster> = Api::all(hub.clone());
    let refreshed = Refreshed::default();
    watcher(clusters.clone(), watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .for_each(|event| {
            let hub = hub.clone();
            let clusters = clusters.clone();
            let refreshed = refreshed.clone();
            async move {
                match event {
                    Ok(cluster) => {
                        let cluster = Arc::new(cluster);
                        if let Err(e) = answer(&hub, &clusters, cluster.clone(), auto_approve).await
                        {
                            tracing::warn!(error = %e, "joining controller");
                        }
                        if let Err(e) = refresh(&hub, &cluster, &refreshed).await {
                            tracing::warn!(error = %e, "re-applying the agent RBAC");
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "watching Clusters"),
                }
            }
        })
        .await;
}

/// Re-applies the agent RBAC of `cluster` once per run, when it is a joined pull cluster (a
/// failure is retried at its next event). The watch lists every Cluster when it starts, so each
/// joined cluster is refreshed soon after the controller starts.
async fn refresh(hub: &Client, cluster: &Cluster, refreshed: &Refreshed) -> crate::Result<()> {
    let joined = cluster
        .status
        .as_ref()
        .is_some_and(|s| conditions::is_true(&s.conditions, CONDITION_JOINED));
    let Some(uid) = cluster.uid() else {
        return Ok(());
    };
    if cluster.metadata.deletion_timestamp.is_some()
        || cluster.spec.sync_mode != SyncMode::Pull
        || !joined
        || !refreshed.lock().insert(uid.clone())
    {
        return Ok(());
    }
    let result = registry::refresh_agent_rbac(hub, &cluster.name_any()).await;
    if result.is_err() {
        refreshed.lock().remove(&uid);
    }
    result
}

async fn answer(
    hub: &Client,
    clusters: &Api<Cluster>,
    cluster: Arc<Cluster>,
    auto_approve: bool,
) -> crate::Result<()> {
    if cluster.metadata.deletion_timestamp.is_some() {
        return Ok(());
    }
    let joined = cluster
        .status
        .as_ref()
        .and_then(|s| s.conditions.iter().find(|c| c.type_ == CONDITION_JOINED));
    let name = cluster.name_any();
    match joined {
        Some(c) if c.status == "True" => Ok(()),
        _ if auto_approve => registry::approve(hub, &name, "the hub (--auto-approve)").await,
        Some(_) => Ok(()),
        None => {
            let mut conditions = cluster
                .status
                .as_ref()
                .map(|s| s.conditions.clone())
                .unwrap_or_default();
            let message = format!("waiting for `flotilla cluster approve {name}`");
            let pending = Set {
                type_: CONDITION_JOINED,
                status: "False",
                reason: REASON_PENDING_APPROVAL,
                message: &message,
            };
            conditions::set(&mut conditions, pending, Timestamp::now());
            // Conditional on the version read: `flotilla join` or `cluster approve` may have
            // marked it Joined meanwhile, and a stale write must not undo that (a 409 here
            // means the newer version is on its way to this controller).
            let patch = json!({
                "metadata": {"resourceVersion": cluster.metadata.resource_version},
                "status": {"conditions": conditions},
            });
            match clusters
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                Ok(_) => Ok(()),
                Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
                Err(source) => Err(crate::Error::Hub {
                    action: format!("marking Cluster {name} pending approval"),
                    source,
                }),
            }
        }
    }
}
