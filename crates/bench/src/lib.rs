//! `flotilla-bench`: the benchmark programs behind `flotilla bench …`. The `flotilla` binary
//! parses [`BenchArgs`] into its command line and calls [`run`]; the hubs and agents a benchmark
//! starts are that same binary (`std::env::current_exe`) with `serve`, `agent` or `join`.
//!
//! `flotilla bench api`: drive a Kubernetes API server over HTTPS, print throughput, latency and
//! memory figures next to the targets, and append them to BENCHMARKS.md.
//!
//! By default it measures a hub it starts itself (the binary's `serve`, SQLite in a temporary
//! directory) and stops it at the end, also on error or Ctrl-C. `--kubeconfig` measures another
//! server instead; `--peer-kubeconfig` measures a second server after the first (e.g. a
//! kube-apiserver with etcd) and adds its figures and the ratios to the report.
//!
//! Parts: [`kubeconfig`] reads credentials, [`client`] speaks HTTP/2, [`hub`] runs the hub,
//! [`phases`] measures, [`figures`] holds the results, [`report`] writes them.
//!
//! The other benchmarks: [`work`] and [`propagation`] run on real member clusters and share
//! [`fleet`] (the hub, agents and members; [`members`] starts those, [`procs`] runs and stops
//! processes), [`track`] (watches that time deliveries) and [`open_loop`] (load on a fixed
//! schedule); [`scheduler`] runs in process; [`dns`] runs flotilla's DNS server and knotd
//! under dnsperf; [`interpret`] times ResourceInterpreter rules in process. All share [`progress`], [`stats`] and [`report`].

mod args;
mod client;
mod dns;
mod figures;
mod fleet;
mod ha;
mod hub;
mod interpret;
mod karmada;
mod kubeconfig;
mod members;
mod open_loop;
mod phases;
mod procs;
mod progress;
mod propagation;
mod report;
mod scale;
mod scheduler;
mod stats;
mod track;
mod work;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};

use client::Client;
use figures::Missing;
use phases::Scale;
use progress::Progress;

/// `flotilla bench …`: benchmark programs that print figures and append them to BENCHMARKS.md.
#[derive(Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    what: What,
}

#[derive(Subcommand, Debug)]
enum What {
    /// Benchmark the Kubernetes API: create/update throughput at 16 and 64 clients, GET and LIST
    /// latency at a fixed offered load (open loop), watch delivery latency to 1,000 watchers,
    /// and resident memory at 100,000 ConfigMaps. Takes about 2–5 minutes (`--quick`: ~20 s).
    Api(ApiArgs),
    /// Benchmark Work delivery with 3 real member clusters (2 joined in Pull mode, 1 in Push
    /// mode): latency from a Work created on the hub to Applied=True for 1,000 Works at 50/s
    /// (split pull/push), then the pull agent's memory at 10,000 manifests, then cleanup.
    /// Takes about 2–4 minutes (`--quick`: about 1).
    Work(work::WorkArgs),
    /// Benchmark propagation with 3 real member clusters (2 pull, 1 push): a
    /// PropagationPolicy sends Deployments to all 3; times 1,000 template changes at 20/s from
    /// the hub's answer to the change showing in every member (target p99 ≤ 1 s), then
    /// propagates 10,000 Deployments and reads the hub's memory and throughput, then deletes
    /// it all and times the cascade. Takes about 30–40 minutes on 2 cores, most of it in the
    /// 10,000 (`--quick`: 1–2 minutes).
    Propagation(propagation::PropagationArgs),
    /// Benchmark the scheduler in process: place 10,000 simulated bindings over 1,000
    /// simulated clusters on one thread and print decisions/s, per-decision latency, failed
    /// decisions and peak memory. Takes about a minute (`--quick`: a few seconds).
    Scheduler(scheduler::SchedulerArgs),
    /// Benchmark ResourceInterpreter rules in process: the interpreters shipped in
    /// examples/interpreters/ over member-shaped objects, every rule each has, on one thread;
    /// prints rules/s next to the target. Takes about 10 seconds (`--quick`: about 1).
    Interpret(interpret::InterpretArgs),
    /// Benchmark flotilla's DNS server against knotd serving the same records (1,000 services ×
    /// 3 endpoints) with dnsperf, one server after the other: answers/s, lost queries, p50/p99
    /// latency and the ratio; then flotilla's memory at 10,000 services and how long a verdict
    /// change takes to show in its answers. Needs knotd and dnsperf (apt-get install knot
    /// dnsperf). Takes about 2 minutes (`--quick`: about 30 s).
    Dns(dns::DnsArgs),
    /// Benchmark the active-active hub (issue 14): 3 `flotilla serve` replicas on one
    /// PostgreSQL and nats-server started with scripts/ha — creates/s on 1 vs 3 replicas,
    /// cross-replica watch delivery, watchers of a SIGKILLed replica resuming on another,
    /// acknowledged writes lost, and controller takeover between two `flotilla controllers`.
    /// Takes about 2 minutes (`--quick`: about 1).
    Ha(ha::HaArgs),
    /// Benchmark the hub with many simulated member clusters (issue 15): `flotilla serve` and
    /// `flotilla sim --count N` (default 1,000, all joined in Push mode) — how long until all
    /// are Ready on the hub, then the idle hub's and simulator's CPU and memory. Takes about
    /// 2 minutes (`--quick`: 20 clusters, about 20 s).
    Scale(scale::ScaleArgs),
}

/// `bench api --durability`: the hub's durabilities to measure.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Durabilities {
    Full,
    Relaxed,
    Both,
}

impl Durabilities {
    /// The `flotilla serve --durability` values, the target's first.
    fn values(self) -> &'static [&'static str] {
        match self {
            Durabilities::Full => &["full"],
            Durabilities::Relaxed => &["relaxed"],
            Durabilities::Both => &["full", "relaxed"],
        }
    }
}

/// Options of `flotilla bench api`.
#[derive(Args, Debug)]
pub struct ApiArgs {
    /// Measure the server of this kubeconfig (its current context; bearer token or client
    /// certificate) instead of starting a hub. The benchmark creates namespaces named
    /// bench-… there and deletes them at the end.
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Process id of the --kubeconfig server, to read its resident memory (VmRSS). Repeat it
    /// for a server made of several processes (kube-apiserver and etcd): the sum is reported.
    /// Without it, memory is not measured.
    #[arg(long, value_name = "PID", requires = "kubeconfig")]
    pid: Vec<u32>,
    /// Name of the measured server in the report [default: "flotilla hub", or "target" with
    /// --kubeconfig].
    #[arg(long, value_name = "NAME")]
    label: Option<String>,
    /// Also measure the server of this kubeconfig, after the first one is done (and a hub
    /// started by the benchmark is stopped), and print each figure's ratio first/peer.
    #[arg(long, value_name = "FILE")]
    peer_kubeconfig: Option<PathBuf>,
    /// Process id of the peer server, to read its resident memory; repeatable like --pid.
    #[arg(long, value_name = "PID", requires = "peer_kubeconfig")]
    peer_pid: Vec<u32>,
    /// Name of the peer in the report.
    #[arg(
        long,
        value_name = "NAME",
        default_value = "peer",
        requires = "peer_kubeconfig"
    )]
    peer_label: String,
    /// Where the hub started by the benchmark keeps its data (a new or empty directory; it is
    /// kept) [default: a temporary directory, removed at the end]. With both durabilities,
    /// each run gets a subdirectory (`full`, `relaxed`).
    #[arg(long, value_name = "DIR", conflicts_with = "kubeconfig")]
    data_dir: Option<PathBuf>,
    /// The `--durability` of the hub started by the benchmark: `full` (flushed to disk before
    /// a write is answered, the default of `flotilla serve`), `relaxed`, or `both`: the hub is
    /// measured with full, then started again on a fresh directory with relaxed, and the
    /// report shows relaxed in a column of its own.
    #[arg(long, value_enum, default_value_t = Durabilities::Both, conflicts_with = "kubeconfig")]
    durability: Durabilities,
    /// A short run (~20 s, small counts) that proves the tool works; its figures mean little
    /// and are appended only with --output.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    out: report::OutputArgs,
}

/// Run a benchmark.
/// `n` simulated clusters with the scheduler bench's topology, labels, taints and capacity
/// (`flotilla sim` gives its members the same).
pub use scheduler::fleet as simulated_fleet;

pub async fn run(args: BenchArgs) -> Result<()> {
    match args.what {
        What::Api(a) => {
            // Dropping the benchmark's future stops a hub it started (see `hub::Hub`).
            tokio::select! {
                r = api(a) => r,
                _ = tokio::signal::ctrl_c() => bail!("interrupted; the hub, if one was started, is stopped"),
            }
        }
        What::Work(a) => on_fleet(work::run(a)).await,
        What::Propagation(a) => on_fleet(propagation::run(a)).await,
        // Pure computation, nothing to stop: off the async threads, and Ctrl-C ends it as usual.
        What::Scheduler(a) => tokio::task::spawn_blocking(move || scheduler::run(a))
            .await
            .context("the scheduler benchmark panicked")?,
        What::Interpret(a) => tokio::task::spawn_blocking(move || interpret::run(a))
            .await
            .context("the interpreter benchmark panicked")?,
        // Stops the servers it started on Ctrl-C itself.
        What::Dns(a) => dns::run(a).await,
        // Takes its replica set down on Ctrl-C itself.
        What::Ha(a) => ha::run(a).await,
        What::Scale(a) => on_fleet(scale::run(a)).await,
    }
}

/// Run a benchmark on the member-cluster fleet until it ends or Ctrl-C; dropping its future
/// stops the hub and agents it started.
async fn on_fleet(bench: impl std::future::Future<Output = Result<()>>) -> Result<()> {
    tokio::select! {
        r = bench => r,
        _ = tokio::signal::ctrl_c() => bail!("interrupted; the hub and agents the benchmark started are stopped"),
    }
}

async fn api(a: ApiArgs) -> Result<()> {
    let scale = if a.quick {
        Scale::quick()
    } else {
        Scale::full()
    };
    report::warn_if_debug(a.quick);
    let output = a.out.path(a.quick);
    let run = format!("bench-{:08x}", rand::random::<u32>());
    let when = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();

    // Fail before the long first run if the peer is not usable.
    let peer_client = match &a.peer_kubeconfig {
        Some(path) => Some(connect(path).await.context("checking the peer")?),
        None => None,
    };
    let (target, also) = match &a.kubeconfig {
        None => {
            let durabilities = a.durability.values();
            let mut measured = Vec::new();
            for (i, durability) in durabilities.iter().enumerate() {
                let run = format!("{run}-{i}");
                let split = durabilities.len() > 1;
                measured.push(measure_hub(&a, &scale, &run, durability, split).await?);
            }
            let target = measured.remove(0);
            (target, measured)
        }
        Some(path) => {
            let client = connect(path).await?;
            let label = a.label.clone().unwrap_or_else(|| "target".into());
            let target = measure_server(&client, &label, &a.pid, &scale, &run).await?;
            (target, Vec::new())
        }
    };
    let peer = match &peer_client {
        Some(client) => Some(
            measure_server(
                client,
                &a.peer_label,
                &a.peer_pid,
                &scale,
                &format!("{run}-peer"),
            )
            .await?,
        ),
        None => None,
    };

    let build = report::build();
    let section = report::Section {
        when,
        machine: report::machine(),
        commit: report::commit(),
        run: format!(
            "{} scale, {build} build of flotilla {}, load generator on the same machine",
            scale.name,
            env!("CARGO_PKG_VERSION")
        ),
        target,
        also,
        peer,
    };
    let text = report::render(&section);
    report::publish(&text, output.as_deref())?;
    let failed: Vec<&str> = section
        .target
        .figures
        .iter()
        .filter(|f| matches!(f.value, Err(Missing::Failed(_))))
        .map(|f| f.key)
        .collect();
    if !failed.is_empty() {
        bail!(
            "some figures could not be measured ({}); see the report above",
            failed.join(", ")
        );
    }
    Ok(())
}

/// A client of the server of `kubeconfig`, once it answers `/readyz`.
async fn connect(kubeconfig: &Path) -> Result<Client> {
    let target = kubeconfig::read(kubeconfig)?;
    let client = Client::new(&target, 1)?;
    client
        .wait_ready(Duration::from_secs(30), || Ok(()))
        .await?;
    Ok(client)
}

/// Start a hub, measure it, stop it: a hub the benchmark starts with `--durability durability`; `split`: the data
/// directory given is shared with another run (each gets a subdirectory named after its
/// durability).
async fn measure_hub(
    a: &ApiArgs,
    scale: &Scale,
    run: &str,
    durability: &'static str,
    split: bool,
) -> Result<report::Measured> {
    let name = a.label.clone().unwrap_or_else(|| "flotilla hub".into());
    let label = format!("{name} ({durability})");
    let progress = Progress::new(&label);
    progress.note(&format!(
        "starting `flotilla serve --durability {durability}` (SQLite)"
    ));
    let data_dir = match &a.data_dir {
        Some(d) if split => Some(d.join(durability)),
        other => other.clone(),
    };
    let args = ["--durability", durability];
    let (mut hub, target) =
        tokio::task::spawn_blocking(move || hub::Hub::start(data_dir.as_deref(), &args))
            .await
            .context("starting the hub")??;
    let client = Client::new(&target, 1)?;
    client
        .wait_ready(Duration::from_secs(60), || hub.check_alive())
        .await?;
    progress.note(&format!("ready at {}, pid {}", client.server(), hub.pid()));
    let filesystem = report::filesystem_of(hub.data_dir());
    let figures = phases::run_all(&client, run, scale, &progress, &[hub.pid()]).await;
    // A hub that died mid-run explains every failure after it; say so first.
    hub.check_alive()?;
    let figures = figures?;
    tokio::task::spawn_blocking(move || hub.stop())
        .await
        .context("stopping the hub")??;
    Ok(report::Measured {
        label,
        about: format!(
            "`flotilla serve --durability {durability}` with SQLite, started by the benchmark on \
             a fresh data directory (on {filesystem})"
        ),
        figures,
    })
}

/// Measure a server that runs already, then delete what the benchmark created there.
async fn measure_server(
    client: &Client,
    label: &str,
    pids: &[u32],
    scale: &Scale,
    run: &str,
) -> Result<report::Measured> {
    let progress = Progress::new(label);
    progress.note(&format!("measuring {}", client.server()));
    let figures = phases::run_all(client, run, scale, &progress, pids).await;
    for ns in phases::namespaces(run) {
        let path = format!("/api/v1/namespaces/{ns}");
        if let Err(e) = client
            .send(hyper::Method::DELETE, &path, Default::default())
            .await
        {
            progress.note(&format!(
                "warning: could not delete the namespace {ns}: {e:#}"
            ));
        }
    }
    let memory = match pids {
        [] => "memory not measured (no --pid)".to_string(),
        [pid] => format!("memory of pid {pid}"),
        _ => format!(
            "memory of pids {}",
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(" + ")
        ),
    };
    Ok(report::Measured {
        label: label.to_string(),
        about: format!("{}, {memory}", client.server()),
        figures: figures?,
    })
}
