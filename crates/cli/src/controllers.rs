//! `flotilla controllers`: every controller and push worker in a process of its own, an
//! ordinary client of the hub; `serve` runs the same ([`run`]) unless `--no-controllers`.
//!
//! Any number of these processes (and hubs running controllers) share the work with no
//! leader: each holds the Leases of some of the 16 shards in `flotilla-system` and works only
//! those ([`flotilla_controllers::shards`]); when one stops, the others take its shards over.

mod in_process;
mod metrics;
pub(crate) mod run;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

/// The controllers' options, the same for `serve` and `controllers`.
#[derive(Args, Debug, Clone)]
pub struct ControllerArgs {
    /// Approve every cluster that asks to join (labs and tests; production approves each with
    /// `flotilla cluster approve`).
    #[arg(long)]
    pub auto_approve: bool,
    /// A cluster whose Lease is not renewed for this long turns Ready=Unknown and is tainted
    /// cluster.flotilla.io/unreachable:NoSchedule.
    #[arg(long, default_value = "40s", value_parser = crate::fleet::parse_duration)]
    pub cluster_grace_period: Duration,
    /// Workloads stay on an unreachable or not-ready cluster (tainted NoExecute) this long
    /// before they are moved to healthy clusters; a policy's clusterTolerations with
    /// tolerationSeconds override it per workload.
    #[arg(long, default_value = "60s", value_parser = crate::fleet::parse_duration)]
    pub failover_toleration: Duration,
    /// When failover moves a workload, its copy in the failed cluster is kept until the
    /// replacement reports its replicas ready, or this long at most (0s: removed at once).
    #[arg(long, default_value = "10m", value_parser = crate::fleet::parse_duration)]
    pub graceful_eviction_timeout: Duration,
    /// A cluster failover left must be Ready this long, without interruption, before workloads
    /// return to it (failback; shrinking clusters wait until the returning replicas are
    /// ready). `Never` keeps them where failover put them.
    #[arg(long, default_value = "5m", value_parser = parse_failback)]
    pub failback_after: Failback,
    /// Let every namespace's policies place onto the ClusterSet `default` (the clusters without
    /// a cluster.flotilla.io/clusterset label) with no ClusterSetBinding: the hub keeps the
    /// ClusterSet `default` with spec.allNamespaces set to this. `false` makes every namespace
    /// need a ClusterSetBinding, which needs create on clustersets/bind of its set.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub default_clusterset_binding: bool,
    /// How often push workers renew their clusters' Leases.
    #[arg(long, default_value = "10s", value_parser = crate::fleet::parse_duration)]
    pub heartbeat_interval: Duration,
    /// The DNS zone of the fleet's names, e.g. fleet.example.com: a propagated LoadBalancer
    /// Service web in namespace shop is `web.shop.ZONE` (and `web.shop.REGION.ZONE`,
    /// `web.shop.CLUSTER.ZONE`). With it the controllers judge endpoints by the voters and
    /// publish the names (DNSEndpoints, the hub Services' EXTERNAL-IP); `serve --dns-listen`
    /// or `flotilla dns` answer for it.
    #[arg(long, value_name = "ZONE", value_parser = crate::dns::parse_zone)]
    pub dns_zone: Option<String>,
    /// The source address the probes of service endpoints use when this process votes for
    /// its push members (default: chosen by the kernel's routing).
    #[arg(long, value_name = "IP")]
    pub probe_source: Option<IpAddr>,
}

/// Options of `flotilla controllers`.
#[derive(Args, Debug)]
#[command(
    after_help = "Several processes may run at once, on any machines: they share the \
work by the shard Leases in flotilla-system (kubectl get leases -n flotilla-system shows who \
holds what). When one stops, the others take its shards over within 15 s."
)]
pub struct ControllersArgs {
    /// The hub's kubeconfig (e.g. a hub's DATA_DIR/admin.kubeconfig); default KUBECONFIG,
    /// then ~/.kube/config.
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// This process's name in the Leases it holds (holderIdentity), unique among the
    /// processes sharing the work. Default: HOSTNAME-PID-XXXX (4 random hex digits).
    #[arg(long, value_name = "NAME")]
    identity: Option<String>,
    /// Serve this process's Prometheus metrics over plain HTTP at http://ADDR/metrics (e.g.
    /// 127.0.0.1:9464; keep it on loopback or a private network).
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    #[command(flatten)]
    controllers: ControllerArgs,
}

/// Runs the controllers until SIGTERM or Ctrl-C, then gives the shards back.
pub async fn run(args: ControllersArgs) -> Result<()> {
    let identity = args.identity.clone().unwrap_or_else(default_identity);
    let kubeconfig = match args.kubeconfig.clone() {
        Some(k) => k,
        None => default_kubeconfig()?,
    };
    if let Some(addr) = args.metrics_listen {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr} for --metrics-listen"))?;
        tracing::info!(address = %listener.local_addr()?, "serving metrics at /metrics");
        tokio::spawn(metrics::serve(listener));
    }
    tracing::info!(%identity, "controllers starting");
    run::run(
        &kubeconfig,
        None,
        &args.controllers,
        &identity,
        crate::serve::shutdown_signal(),
    )
    .await
}

/// `HOSTNAME-PID-XXXX`: unique per process, and says where it runs.
pub fn default_identity() -> String {
    let random: u16 = rand::random();
    format!("{}-{}-{random:04x}", hostname(), std::process::id())
}

/// The identity of the controllers a hub runs: kept in `DATA_DIR/controller-identity`
/// (`HOSTNAME-XXXXXXXX`, made at first start), so a hub restarted on its data directory, even
/// after a kill -9, takes its own shard Leases back at once instead of waiting for them to
/// lapse. Each replica has its own data directory, hence its own identity.
pub fn hub_identity(data_dir: &std::path::Path) -> Result<String> {
    let path = data_dir.join("controller-identity");
    match std::fs::read_to_string(&path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text.trim().to_owned()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    }
    let random: u32 = rand::random();
    let identity = format!("{}-{random:08x}", hostname());
    std::fs::write(&path, format!("{identity}\n"))
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(identity)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "flotilla".into())
}

fn default_kubeconfig() -> Result<PathBuf> {
    if let Some(k) = std::env::var_os("KUBECONFIG").filter(|k| !k.is_empty()) {
        let first = std::env::split_paths(&k).next();
        return first.context("KUBECONFIG is empty");
    }
    let home = std::env::var_os("HOME")
        .context("no --kubeconfig, no KUBECONFIG and no HOME: pass --kubeconfig")?;
    Ok(PathBuf::from(home).join(".kube").join("config"))
}

/// `--failback-after`: a duration, or never.
#[derive(Clone, Copy, Debug)]
pub struct Failback(pub Option<Duration>);

fn parse_failback(s: &str) -> Result<Failback, String> {
    if s.eq_ignore_ascii_case("never") {
        return Ok(Failback(None));
    }
    crate::fleet::parse_duration(s)
        .map(|d| Failback(Some(d)))
        .map_err(|e| format!("{e}, or Never"))
}
