//! Push mode: workers inside the hub process that do an agent's job for members that cannot run
//! one, with the member credential kept in a Secret the Cluster points to (`spec.secretRef`).
//!
//! The supervisor watches Clusters and keeps one worker per joined Push cluster: the same
//! [`Delivery`] loop and [`heartbeat`] a pull agent runs, with the hub's own client on one side
//! and a client built from the Secret's `kubeconfig` on the other. A worker is restarted when its
//! Cluster's secretRef changes, and stopped when the Cluster goes or turns Pull.

use std::collections::HashMap;
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::{Cluster, SecretRef, SyncMode, CONDITION_JOINED};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Secret;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Config, ResourceExt};
use tokio::task::JoinHandle;

use crate::delivery::{self, Delivery};
use crate::{heartbeat, Error, Result};

/// How often the supervisor re-checks its workers (a worker whose member credential was bad is
/// retried this often).
const RECHECK: Duration = Duration::from_secs(15);

struct Worker {
    /// What the worker was started with; a change restarts it (taints and labels do not).
    secret_ref: Option<SecretRef>,
    task: JoinHandle<()>,
}

/// Runs push workers for every joined Push cluster, through `hub` (the hub's own client), until
/// dropped.
pub async fn supervise(hub: Client, delivery: delivery::Options, beat: heartbeat::Options) {
    let (store, writer) = reflector::store();
    let clusters: Api<Cluster> = Api::all(hub.clone());
    let mut changes = Box::pin(
        watcher(clusters, watcher::Config::default())
            .default_backoff()
            .reflect(writer)
            .touched_objects(),
    );
    let mut workers: HashMap<String, Worker> = HashMap::new();
    let mut tick = tokio::time::interval(RECHECK);
    loop {
        tokio::select! {
            event = changes.next() => match event {
                Some(Err(e)) => tracing::warn!(error = %e, "watching Clusters"),
                Some(Ok(_)) => {}
                None => return,
            },
            _ = tick.tick() => {}
        }
        reconcile(&hub, &store, &mut workers, &delivery, &beat).await;
    }
}

async fn reconcile(
    hub: &Client,
    store: &Store<Cluster>,
    workers: &mut HashMap<String, Worker>,
    delivery: &delivery::Options,
    beat: &heartbeat::Options,
) {
    let wanted: HashMap<String, std::sync::Arc<Cluster>> = store
        .state()
        .into_iter()
        .filter(|c| wants_worker(c))
        .map(|c| (c.name_any(), c))
        .collect();
    workers.retain(|name, w| {
        let keep = !w.task.is_finished()
            && wanted
                .get(name)
                .is_some_and(|c| c.spec.secret_ref == w.secret_ref);
        if !keep {
            tracing::info!(cluster = %name, "stopping the push worker");
            w.task.abort();
        }
        keep
    });
    for (name, cluster) in wanted {
        if workers.contains_key(&name) {
            continue;
        }
        match member_client(hub, &cluster).await {
            Ok(member) => {
                tracing::info!(cluster = %name, "starting the push worker");
                let task = tokio::spawn(work(
                    hub.clone(),
                    member,
                    name.clone(),
                    delivery.clone(),
                    beat.clone(),
                ));
                workers.insert(
                    name,
                    Worker {
                        secret_ref: cluster.spec.secret_ref.clone(),
                        task,
                    },
                );
            }
            Err(e) => tracing::warn!(cluster = %name, error = %e, "cannot reach the push member"),
        }
    }
}

fn wants_worker(c: &Cluster) -> bool {
    c.metadata.deletion_timestamp.is_none()
        && c.spec.sync_mode == SyncMode::Push
        && c.status.as_ref().is_some_and(|s| {
            s.conditions
                .iter()
                .any(|c| c.type_ == CONDITION_JOINED && c.status == "True")
        })
}

async fn work(
    hub: Client,
    member: Client,
    cluster: String,
    delivery: delivery::Options,
    beat: heartbeat::Options,
) {
    tokio::select! {
        _ = Delivery::run(hub.clone(), member.clone(), &cluster, delivery) => {}
        r = heartbeat::run(hub, member, &cluster, beat) => {
            if let Err(e) = r {
                tracing::warn!(%cluster, error = %e, "push worker stopped");
            }
        }
    }
}

/// A client for the member from the Secret the Cluster's `spec.secretRef` names (key
/// `kubeconfig`).
pub async fn member_client(hub: &Client, cluster: &Cluster) -> Result<Client> {
    let name = cluster.name_any();
    let reference =
        cluster.spec.secret_ref.as_ref().ok_or_else(|| {
            Error::Credential(format!("Push cluster {name} has no spec.secretRef"))
        })?;
    let secrets: Api<Secret> = Api::namespaced(hub.clone(), &reference.namespace);
    let secret = secrets
        .get(&reference.name)
        .await
        .map_err(|source| Error::Hub {
            action: format!(
                "reading Secret {}/{} of cluster {name}",
                reference.namespace, reference.name
            ),
            source,
        })?;
    let bytes = secret
        .data
        .as_ref()
        .and_then(|d| d.get("kubeconfig"))
        .map(|b| b.0.clone())
        .ok_or_else(|| {
            Error::Credential(format!(
                "Secret {}/{} has no key kubeconfig",
                reference.namespace, reference.name
            ))
        })?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::Credential("the member kubeconfig is not UTF-8".into()))?;
    client_from_kubeconfig(&text).await
}

/// A client from kubeconfig text.
pub async fn client_from_kubeconfig(text: &str) -> Result<Client> {
    let kubeconfig = Kubeconfig::from_yaml(text)
        .map_err(|e| Error::Credential(format!("parsing a member kubeconfig: {e}")))?;
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| Error::Credential(format!("loading a member kubeconfig: {e}")))?;
    Client::try_from(config)
        .map_err(|e| Error::Credential(format!("a client for a member kubeconfig: {e}")))
}
