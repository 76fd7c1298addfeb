//! Joining every simulated cluster to the hub in Pull mode, and running its agent.
//!
//! Each cluster joins the way a member running `flotilla agent` does: a bootstrap credential
//! of its own (issued with the hub's admin kubeconfig, as `flotilla token create --cluster`
//! does), a join request with its topology, the admin's approval (the simulator plays the
//! admin, as `flotilla cluster approve`), then the agent's own token, kept in
//! `DIR/agents/<name>/`. Each cluster then runs the agent's loops ([`loops::pull`], the code of
//! `flotilla agent`) as a task of its own, with its own hub credential and its own client for
//! its simulated API. A stopped cluster's agent stops with it and starts again with it, as an
//! agent running inside a cluster would.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use flotilla_agent::join::{self, JoinRequest, StateDir};
use flotilla_agent::loops::{self, Loops};
use flotilla_apis::cluster::v1alpha1::Cluster;
use kube::api::{Patch, PatchParams};
use kube::config::Kubeconfig;
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::sync::{oneshot, watch};

use super::router;
use crate::fleet::agent::member_client;
use crate::fleet::client::hub_config;
use crate::fleet::token;

/// Clusters joining at once (each mostly waits: the agent looks for its approval every second).
const JOINING: usize = 64;

/// How long each cluster's bootstrap credential may be used to ask to join.
const BOOTSTRAP_TTL: Duration = Duration::from_secs(3600);

/// How long a simulated agent waits before it runs again after its loops ended.
const RESTART_AFTER: Duration = Duration::from_secs(1);

/// Join `names` (in order: the n-th gets the n-th topology of the scheduler bench's fleet) to
/// the hub of `hub_kubeconfig` in Pull mode, starting each one's agent once it has joined;
/// `heartbeat` is how often the agents renew their Leases. Returns when all have joined; the
/// agents run on.
pub async fn all(
    hub_kubeconfig: &Path,
    dir: &Path,
    names: &[String],
    clusters: Arc<router::Clusters>,
    heartbeat: Duration,
) -> Result<()> {
    let (config, kubeconfig) = hub_config(Some(hub_kubeconfig)).await?;
    let hub = Client::try_from(config).context("cannot build a client for the hub")?;
    let loops = Loops {
        beat: flotilla_agent::heartbeat::Options {
            interval: heartbeat,
            holder: "flotilla-sim".into(),
            ..Default::default()
        },
        ..Loops::default()
    };
    super::join_each(names, JOINING, "Pull", |cluster| {
        let (hub, kubeconfig, clusters, loops) = (&hub, &kubeconfig, &clusters, &loops);
        async move {
            let name = cluster.name_any();
            let state = StateDir(dir.join("agents").join(&name));
            if !state.joined() {
                join_one(hub, kubeconfig, &state, &cluster)
                    .await
                    .with_context(|| format!("joining {name} to the hub in Pull mode"))?;
            }
            let stopped = clusters
                .stopped(&name)
                .with_context(|| format!("the simulator serves no cluster {name}"))?;
            let member = dir.join(format!("{name}.kubeconfig"));
            tokio::spawn(run_agent(name, state, member, stopped, loops.clone()));
            Ok(())
        }
    })
    .await
}

/// One cluster's join: its bootstrap credential, its request, the approval (with the
/// topology's taints set first, as an admin would before approving), its own credential.
async fn join_one(
    hub: &Client,
    kubeconfig: &Kubeconfig,
    state: &StateDir,
    cluster: &Cluster,
) -> Result<()> {
    let name = cluster.name_any();
    std::fs::create_dir_all(&state.0)
        .with_context(|| format!("cannot create {}", state.0.display()))?;
    crate::serve::files::private_dir(&state.0)?;
    let issued = token::issue(
        hub,
        kubeconfig,
        BOOTSTRAP_TTL,
        Some(&name),
        Some("flotilla sim"),
    )
    .await?;
    let bootstrap = state.0.join("bootstrap.kubeconfig");
    crate::serve::pki::write_private(&bootstrap, &issued.kubeconfig)?;
    let spec = &cluster.spec;
    let request = JoinRequest {
        cluster: name.clone(),
        labels: cluster.labels().clone(),
        region: spec.region.clone(),
        zone: spec.zone.clone(),
        provider: spec.provider.clone(),
        networks: spec.networks.clone(),
    };
    let (asked, approve) = oneshot::channel();
    let joining = async {
        join::join(&bootstrap, &request, state, move || {
            let _ = asked.send(());
        })
        .await
        .map_err(anyhow::Error::from)
    };
    let approving = async {
        // No request to approve when the join failed first (it says why) or was approved
        // before (the simulator restarted).
        if approve.await.is_err() {
            return anyhow::Ok(());
        }
        if !spec.taints.is_empty() {
            Api::<Cluster>::all(hub.clone())
                .patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"taints": spec.taints}})),
                )
                .await
                .with_context(|| format!("tainting the join request of {name}"))?;
        }
        flotilla_controllers::registry::approve(hub, &name, "flotilla sim").await?;
        Ok(())
    };
    tokio::try_join!(joining, approving)?;
    Ok(())
}

/// Runs the agent of cluster `name` while the cluster is not stopped, again after it starts.
async fn run_agent(
    name: String,
    state: StateDir,
    member: PathBuf,
    mut stopped: watch::Receiver<bool>,
    loops: Loops,
) {
    loop {
        if stopped.wait_for(|s| !*s).await.is_err() {
            return;
        }
        let running = async {
            let hub = flotilla_agent::client::multiplexed(state.config().await?)
                .context("a client for the hub")?;
            let member = member_client(Some(&member)).await?;
            Ok(loops::pull(hub, member, &name, &state, loops.clone()).await?)
        };
        tokio::select! {
            ended = running => match ended {
                Err(e) if revoked(&e) => {
                    tracing::warn!(cluster = %name, error = %e, "the hub revoked the simulated agent");
                    return;
                }
                Err(e) => tracing::warn!(cluster = %name, error = %e, "simulated agent; restarting"),
                Ok(()) => tracing::warn!(cluster = %name, "simulated agent ended; restarting"),
            },
            _ = stopped.wait_for(|s| *s) => {
                tracing::info!(cluster = %name, "simulated cluster stopped, and its agent");
                continue;
            }
        }
        tokio::time::sleep(RESTART_AFTER).await;
    }
}

fn revoked(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<flotilla_agent::Error>(),
        Some(flotilla_agent::Error::Revoked(_))
    )
}
