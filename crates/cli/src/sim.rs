//! `flotilla sim`: many simulated member clusters in one process, each a real Kubernetes API
//! (flotilla's own API server on an in-memory store) under `https://ADDR/clusters/<name>`.
//!
//! With `--hub-kubeconfig` every cluster joins that hub with the topology, labels and taints of
//! the scheduler bench's fleet (5 regions × 3 zones): in Push mode as `flotilla join` would
//! ([`join`]), or in Pull mode through the agent's own code, one agent task per cluster with
//! its own credential ([`pull`]). A fake kubelet per cluster makes workloads progress
//! ([`kubelet`]); the simulator can stop and start a cluster ([`router`]). Not built yet:
//! Nodes with capacity.

mod join;
mod kubelet;
mod pull;
mod router;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use futures::{StreamExt, TryStreamExt};

use crate::serve::pki;

/// How far a watcher of a simulated cluster may fall behind: each watched directory's buffer
/// is allocated whole, a thousand clusters over (a member sees a few writes a second).
const WATCH_BUFFER: usize = 256;

/// Clusters started at once (each start writes its system namespaces and RBAC).
const STARTING: usize = 8;

#[derive(Args, Debug)]
pub struct SimArgs {
    /// How many member clusters to serve.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    count: u32,
    /// Where to listen (HTTPS); port 0 picks a free port. Every cluster is served here under
    /// `/clusters/<name>`.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: std::net::SocketAddr,
    /// Directory for the clusters' kubeconfigs (`DIR/<name>.kubeconfig`) and the simulator's
    /// CA; created if absent.
    #[arg(long)]
    out: PathBuf,
    /// Cluster names are this prefix, a dash and a number from 1 (`m-1`, `m-2`, …).
    #[arg(long, default_value = "m")]
    prefix: String,
    /// How long after a workload's spec changes its pods count as ready (Deployments,
    /// StatefulSets) or it completes (Jobs).
    #[arg(long, default_value = "1s", value_parser = crate::fleet::parse_duration)]
    ready_after: Duration,
    /// The hub's admin kubeconfig: every cluster joins it once served (see `--mode`).
    #[arg(long)]
    hub_kubeconfig: Option<PathBuf>,
    /// How the clusters join the hub: `push` (the hub's push workers reach each cluster with a
    /// credential the simulator registers, as `flotilla join`) or `pull` (each cluster asks to
    /// join with a bootstrap credential of its own, the simulator approves it, and an agent
    /// task per cluster, the code of `flotilla agent`, delivers its Works; agents' credentials
    /// are kept in `DIR/agents/<name>/`).
    #[arg(long, value_enum, default_value_t = Mode::Push, requires = "hub_kubeconfig")]
    mode: Mode,
    /// Pull mode: how often each cluster's agent renews its Lease on the hub.
    #[arg(long, default_value = "10s", value_parser = crate::fleet::parse_duration)]
    heartbeat_interval: Duration,
}

/// How the simulated clusters join the hub.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Push,
    Pull,
}

pub async fn run(args: SimArgs) -> Result<()> {
    crate::memory::no_huge_pages();
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create the directory {}", args.out.display()))?;
    crate::serve::files::private_dir(&args.out)?;
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let host = addr.ip().to_string();
    let creds = pki::ensure(&args.out, &host, &[])?;
    let base = format!("https://{addr}/clusters");
    let signing_key = args.out.join(flotilla_api::access::signing_key::FILE_NAME);

    let started = Instant::now();
    let names: Vec<String> = (1..=args.count)
        .map(|k| format!("{}-{k}", args.prefix))
        .collect();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let apis: Vec<(String, Arc<flotilla_api::Api>)> = futures::stream::iter(names.clone())
        .map(|name| {
            let (base, ca, signing_key, done) = (&base, &creds.ca_pem, &signing_key, &done);
            let addr = addr.to_string();
            let out = &args.out;
            async move {
                let token = pki::random_token();
                let api = flotilla_api::Api::start(
                    flotilla_api::Config {
                        // Each cluster its own issuer: one cluster's service-account tokens
                        // are no good on another.
                        service_account_issuer: Some(format!("{base}/{name}")),
                        flotilla_kinds: false,
                        watch_buffer: WATCH_BUFFER,
                        ..flotilla_api::Config::new(
                            flotilla_api::auth::AdminToken::new(&token),
                            addr,
                            signing_key.clone(),
                        )
                    },
                    flotilla_store::Store::open("memory:").await?,
                )
                .await
                .map_err(|e| anyhow::anyhow!("starting the API of {name}: {e}"))?;
                kubelet::start(api.clone(), args.ready_after);
                let path = out.join(format!("{name}.kubeconfig"));
                pki::write_kubeconfig(&path, &format!("{base}/{name}"), ca, &token)?;
                report(done, args.count, "started");
                anyhow::Ok((name, api))
            }
        })
        .buffer_unordered(STARTING)
        .try_collect()
        .await?;
    let apis: HashMap<String, Arc<flotilla_api::Api>> = apis.into_iter().collect();
    tracing::info!(
        clusters = apis.len(),
        address = %addr,
        seconds = started.elapsed().as_secs_f64(),
        "serving simulated member clusters at {base}/<name>; kubeconfigs in {}",
        args.out.display()
    );
    // The simulator's own kubeconfig, for its control requests (see `router`).
    pki::write_kubeconfig(
        &args.out.join("sim.kubeconfig"),
        &format!("https://{addr}"),
        &creds.ca_pem,
        &creds.admin_token,
    )?;
    let admin = flotilla_api::auth::AdminToken::new(&creds.admin_token);
    let router = Arc::new(router::Clusters::new(apis, admin));
    let serving = tokio::spawn(flotilla_api::server::serve_routed(
        router.clone(),
        listener,
        creds.tls,
        flotilla_api::server::Limits::default(),
        crate::serve::shutdown_signal(),
    ));
    match (&args.hub_kubeconfig, args.mode) {
        (Some(hub), Mode::Push) => join::all(hub, &args.out, &names).await?,
        (Some(hub), Mode::Pull) => {
            pull::all(hub, &args.out, &names, router, args.heartbeat_interval).await?
        }
        (None, _) => {}
    }
    serving
        .await
        .context("the simulator's server task")?
        .context("serving the simulated clusters")
}

/// Join each of `names` with `join`, `at_once` at a time, the n-th with the n-th topology of the
/// scheduler bench's fleet (named after it), logging progress; `mode` says how they join.
async fn join_each<F, Fut>(names: &[String], at_once: usize, mode: &str, join: F) -> Result<()>
where
    F: Fn(flotilla_apis::cluster::v1alpha1::Cluster) -> Fut,
    Fut: std::future::Future<Output = Result<()>>,
{
    let fleet = flotilla_bench::simulated_fleet(names.len(), 1);
    let started = Instant::now();
    let done = std::sync::atomic::AtomicUsize::new(0);
    let what = format!("joined the hub ({mode})");
    futures::stream::iter(names.iter().zip(fleet))
        .map(|(name, mut cluster)| {
            cluster.metadata.name = Some(name.clone());
            let joined = join(cluster);
            let (done, what) = (&done, &what);
            async move {
                joined.await?;
                report(done, names.len() as u32, what);
                anyhow::Ok(())
            }
        })
        .buffer_unordered(at_once)
        .try_collect::<()>()
        .await?;
    tracing::info!(
        clusters = names.len(),
        seconds = started.elapsed().as_secs_f64(),
        "every simulated cluster joined the hub in {mode} mode"
    );
    Ok(())
}

/// Log every tenth of the clusters that did `what`.
fn report(done: &std::sync::atomic::AtomicUsize, count: u32, what: &str) {
    let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    let step = (count as usize / 10).max(1);
    if n.is_multiple_of(step) || n == count as usize {
        tracing::info!("{n} of {count} clusters {what}");
    }
}
