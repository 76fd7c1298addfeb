//! Push mode: workers inside the hub process that do an agent's job for members that cannot run
//! one, with the member credential kept in a Secret the Cluster points to (`spec.secretRef`).
//!
//! The supervisor watches Clusters and keeps one worker per joined Push cluster: the same
//! [`loops`] a pull agent runs (delivery, exports, probes, heartbeat), with the hub's own client on one side
//! and a client built from the Secret's `kubeconfig` on the other. What the workers watch on
//! the hub they watch together: one watch of each kind for all of them
//! ([`HubWatches::Shared`]). A worker is restarted when its Cluster's secretRef changes, and
//! stopped when the Cluster goes or turns Pull.
//!
//! When several controller processes share the fleet, each runs the workers of the clusters it
//! owns ([`Share`]: the shard of the cluster's name), started and stopped as ownership moves.
//!
//! The credential is held to what the hub may safely use: the Secret must be in
//! flotilla-system, and its kubeconfig must carry inline credentials only, no exec plugin, auth
//! provider or file reference ([`refused_kubeconfig`]). Each push Cluster says in its
//! `CredentialAccepted` condition whether its credential was accepted, and why not.

mod credential;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::{
    Cluster, SecretRef, SyncMode, CONDITION_CREDENTIAL_ACCEPTED, CONDITION_JOINED,
    REASON_CREDENTIAL_ACCEPTED, REASON_CREDENTIAL_REFUSED, REASON_CREDENTIAL_UNAVAILABLE,
};
use flotilla_apis::conditions::{self, Set};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Config, ResourceExt};
use serde_json::json;
use tokio::task::JoinHandle;

pub use credential::refused as refused_kubeconfig;

use crate::hub_watch::{self, HubWatches};
use crate::loops::{self, Loops};
use crate::{Error, Result};

/// How often the supervisor re-checks its workers (a worker whose member credential was bad is
/// retried this often).
const RECHECK: Duration = Duration::from_secs(15);

/// Which Push clusters this process serves, when several processes share them.
pub trait Share: Send + Sync + 'static {
    /// Whether this process serves `cluster` now.
    fn serves(&self, cluster: &str) -> bool;
    /// Ticks when what [`Share::serves`] answers may have changed.
    fn changed(&self) -> BoxStream<'static, ()>;
    /// Runs the worker `work` of `cluster` (e.g. with its writes fenced by the lease that
    /// gives the cluster to this process).
    fn run(&self, cluster: &str, work: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        let _ = cluster;
        work
    }
}

/// Every Push cluster: this process alone serves the fleet.
pub struct All;

impl Share for All {
    fn serves(&self, _: &str) -> bool {
        true
    }

    fn changed(&self) -> BoxStream<'static, ()> {
        futures::stream::pending().boxed()
    }
}

struct Worker {
    /// What the worker was started with; a change restarts it (taints and labels do not).
    secret_ref: Option<SecretRef>,
    task: JoinHandle<()>,
}

/// Runs push workers for every joined Push cluster `share` gives this process, through `hub`
/// (the hub's own client), until dropped.
pub async fn supervise(hub: Client, mut loops: Loops, share: Arc<dyn Share>) {
    // One watch of each kind the workers read on the hub, not one per worker.
    loops.watches = HubWatches::Shared(Arc::new(hub_watch::Shared::new(hub.clone())));
    let mut moved = share.changed();
    let (store, writer) = reflector::store();
    let clusters: Api<Cluster> = Api::all(hub.clone());
    let mut changes = Box::pin(
        watcher(clusters, watcher::Config::default())
            .default_backoff()
            // Workers read spec and conditions; the member's APIs are theirs to probe.
            .modify(|c: &mut Cluster| {
                flotilla_watch::lean(c);
                c.forget_inventory();
            })
            .reflect(writer)
            .touched_objects(),
    );
    let mut workers: HashMap<String, Worker> = HashMap::new();
    let mut tick = tokio::time::interval(RECHECK);
    loop {
        // A Cluster's event concerns its own worker only: with a thousand members, each status
        // write re-checking every worker was most of the supervisor's time. The tick and a
        // change of shares re-check them all (and catch what a watch restart missed).
        let only = tokio::select! {
            event = changes.next() => match event {
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "watching Clusters");
                    continue;
                }
                Some(Ok(c)) => Some(c.name_any()),
                None => return,
            },
            _ = tick.tick() => None,
            Some(()) = moved.next() => None,
        };
        reconcile(&hub, &store, &mut workers, &loops, &*share, only.as_deref()).await;
    }
}

/// Start and stop workers to match the Clusters: every one, or `only` that one.
async fn reconcile(
    hub: &Client,
    store: &Store<Cluster>,
    workers: &mut HashMap<String, Worker>,
    loops: &Loops,
    share: &dyn Share,
    only: Option<&str>,
) {
    let candidates = match only {
        Some(name) => store
            .get(&reflector::ObjectRef::new(name))
            .into_iter()
            .collect(),
        None => store.state(),
    };
    let wanted: HashMap<String, std::sync::Arc<Cluster>> = candidates
        .into_iter()
        .filter(|c| wants_worker(c) && share.serves(&c.name_any()))
        .map(|c| (c.name_any(), c))
        .collect();
    workers.retain(|name, w| {
        if only.is_some_and(|o| o != name) {
            return true;
        }
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
        let member = member_client(hub, &cluster).await;
        report_credential(hub, &cluster, member.as_ref().err()).await;
        match member {
            Ok(member) => {
                tracing::info!(cluster = %name, "starting the push worker");
                let worker = work(hub.clone(), member, name.clone(), loops.clone());
                let task = tokio::spawn(share.run(&name, worker.boxed()));
                workers.insert(
                    name,
                    Worker {
                        secret_ref: cluster.spec.secret_ref.clone(),
                        task,
                    },
                );
            }
            Err(e @ Error::CredentialRefused(_)) => {
                tracing::warn!(cluster = %name, error = %e, "push member credential refused")
            }
            Err(e) => tracing::warn!(cluster = %name, error = %e, "cannot reach the push member"),
        }
    }
}

/// Sets the Cluster's `CredentialAccepted` condition from the outcome of loading its
/// credential (`error`: why it was not used). Best effort: a failed write is logged, and the
/// next check writes again.
async fn report_credential(hub: &Client, cluster: &Cluster, error: Option<&Error>) {
    let message;
    let set = match error {
        None => Set {
            type_: CONDITION_CREDENTIAL_ACCEPTED,
            status: "True",
            reason: REASON_CREDENTIAL_ACCEPTED,
            message: "the hub's worker uses the member credential",
        },
        Some(e) => {
            message = e.to_string();
            Set {
                type_: CONDITION_CREDENTIAL_ACCEPTED,
                status: "False",
                reason: match e {
                    Error::CredentialRefused(_) => REASON_CREDENTIAL_REFUSED,
                    _ => REASON_CREDENTIAL_UNAVAILABLE,
                },
                message: &message,
            }
        }
    };
    let mut list = cluster
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    if !conditions::set(&mut list, set, Timestamp::now()) {
        return;
    }
    let name = cluster.name_any();
    let patch = json!({"status": {"conditions": list}});
    if let Err(e) = Api::<Cluster>::all(hub.clone())
        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
    {
        tracing::warn!(cluster = %name, error = %e, "writing the CredentialAccepted condition");
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

async fn work(hub: Client, member: Client, cluster: String, loops: Loops) {
    if let Err(e) = loops::run(hub, member, &cluster, loops).await {
        tracing::warn!(%cluster, error = %e, "push worker stopped");
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
    // The hub reads no other namespace's Secrets for anyone who may write a Cluster.
    if let Some(why) = flotilla_apis::scope::push_secret_namespace(&reference.namespace) {
        return Err(Error::CredentialRefused(format!("cluster {name}: {why}")));
    }
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

/// A client from kubeconfig text; one with an exec plugin, auth provider or file reference
/// is refused before anything of it is used ([`refused_kubeconfig`]).
pub async fn client_from_kubeconfig(text: &str) -> Result<Client> {
    let kubeconfig = Kubeconfig::from_yaml(text)
        .map_err(|e| Error::Credential(format!("parsing a member kubeconfig: {e}")))?;
    if let Some(why) = credential::refused(&kubeconfig) {
        return Err(Error::CredentialRefused(why));
    }
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| Error::Credential(format!("loading a member kubeconfig: {e}")))?;
    crate::client::multiplexed(config)
        .map_err(|e| Error::Credential(format!("a client for a member kubeconfig: {e}")))
}
