//! `flotilla agent`: the pull agent, run inside (or beside) a member cluster. It dials out to the
//! hub only: asks to join with a bootstrap credential, waits for approval, keeps its own
//! credential in the state directory, then delivers the Works of its execution namespace into
//! the member, reports their status, and renews its Lease.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use clap::Args;
use flotilla_agent::hub_watch::HubWatches;
use flotilla_agent::join::{self, JoinRequest, StateDir};
use flotilla_agent::loops::{self, Loops};
use flotilla_agent::{client, delivery, heartbeat, probe};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

use super::client::{parse_duration, Topology};

/// Options of `flotilla agent`.
#[derive(Args, Debug)]
pub struct AgentArgs {
    /// The name this member has (or asks for) on the hub.
    #[arg(long)]
    cluster: String,
    /// The bootstrap kubeconfig from `flotilla token create`; needed only to join the first time.
    #[arg(long)]
    bootstrap_kubeconfig: Option<PathBuf>,
    /// A kubeconfig for the member cluster (default: in-cluster config, then KUBECONFIG).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Where the agent keeps its own hub credential; keep it across restarts.
    #[arg(long, default_value = "./flotilla-agent")]
    state_dir: PathBuf,
    /// Asked for when joining (the admin sees them before approving).
    #[command(flatten)]
    topology: Topology,
    /// How often the agent renews its Lease on the hub.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    heartbeat_interval: Duration,
    /// Works applied at the same time.
    #[arg(long, default_value_t = 8)]
    workers: usize,
    /// The source address of this member's health probes of the fleet's service endpoints (its
    /// votes in the global DNS); the system's choice when absent.
    #[arg(long)]
    probe_source: Option<std::net::IpAddr>,
}

/// Runs the agent until it is stopped (SIGTERM, Ctrl-C) or the hub revokes it.
pub async fn run(args: AgentArgs, shutdown: impl std::future::Future<Output = ()>) -> Result<()> {
    super::check_cluster_name(&args.cluster)?;
    let member = member_client(args.kubeconfig.as_ref()).await?;
    let state = StateDir(args.state_dir.clone());
    if !state.joined() {
        let bootstrap = args.bootstrap_kubeconfig.as_ref().ok_or_else(|| {
            anyhow!(
                "{} holds no credential yet: pass --bootstrap-kubeconfig (from `flotilla token create` on the hub) to join",
                args.state_dir.display()
            )
        })?;
        let request = JoinRequest {
            cluster: args.cluster.clone(),
            labels: args.topology.label_map()?,
            region: args.topology.region.clone(),
            zone: args.topology.zone.clone(),
            provider: args.topology.provider.clone(),
            networks: args.topology.networks.clone(),
        };
        let name = args.cluster.clone();
        join::join(bootstrap, &request, &state, || {
            tracing::info!(
                cluster = %name,
                "asked to join; waiting for approval (on the hub: flotilla cluster approve {name})"
            )
        })
        .await?;
    }
    let hub = client::multiplexed(state.config().await?).context("a client for the hub")?;
    let holder = format!(
        "flotilla-agent/{}",
        std::env::var("HOSTNAME").unwrap_or_else(|_| "agent".into())
    );
    let loops = Loops {
        beat: heartbeat::Options {
            interval: args.heartbeat_interval,
            holder,
            ..heartbeat::Options::default()
        },
        delivery: delivery::Options {
            workers: args.workers,
            ..delivery::Options::default()
        },
        probe: probe::Options {
            source: args.probe_source,
            ..probe::Options::default()
        },
        watches: HubWatches::Own,
    };
    tracing::info!(cluster = %args.cluster, "agent running");
    tokio::select! {
        r = loops::pull(hub, member, &args.cluster, &state, loops) => r.map_err(Into::into),
        _ = shutdown => Ok(()),
    }
}

pub(crate) async fn member_client(kubeconfig: Option<&PathBuf>) -> Result<Client> {
    let config = match kubeconfig {
        Some(path) => {
            let kc = Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read the member kubeconfig {}", path.display()))?;
            Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
                .await
                .with_context(|| {
                    format!("the member kubeconfig {} is not usable", path.display())
                })?
        }
        None => Config::infer().await.context(
            "no member credential: pass --kubeconfig, or run the agent inside the member",
        )?,
    };
    client::multiplexed(config).context("a client for the member")
}
