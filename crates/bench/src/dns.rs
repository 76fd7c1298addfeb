//! `flotilla bench dns`: flotilla's DNS server against knotd serving the same records, on the
//! same machine with the same dnsperf settings, one server at a time.
//!
//! It generates a fleet of N services × E endpoints ([`records`]) and writes it as a zone file
//! for knotd and as a fleet file for `flotilla dns --fleet-file` ([`servers`]), checks that both
//! servers answer a sample of names with the same records ([`probe`]), then for each server: a
//! warm-up, a saturating dnsperf run (answers/s, lost, mean latency) and a fixed-rate run whose
//! per-answer latencies give p50/p99 ([`perf`]), and its memory after the load. Then flotilla
//! alone: its memory at 10,000 services, and how long a verdict change in the fleet file takes
//! to show in its answers ([`verdict`]). The figures are printed and appended to BENCHMARKS.md
//! ([`report`]).

mod perf;
mod probe;
mod records;
mod report;
mod servers;
mod verdict;

use std::collections::BTreeSet;
use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};
use clap::Args;

use super::figures::thousands;
use super::procs;
use super::progress::Progress;
use records::{Generated, ZONE};

/// Options of `flotilla bench dns`.
#[derive(Args, Debug)]
pub struct DnsArgs {
    /// Services in the fleet both servers serve [default: 1000; --quick: 100].
    #[arg(long, value_name = "N")]
    services: Option<usize>,
    /// Endpoints (member clusters m1, m2, …, one per region while regions last) per service.
    #[arg(long, value_name = "N", default_value_t = 3)]
    endpoints: usize,
    /// How long each measured dnsperf run lasts (e.g. 10s, 1500ms) [default: 10s; --quick: 2s].
    #[arg(long, value_name = "TIME", value_parser = crate::args::parse_duration)]
    duration: Option<Duration>,
    /// dnsperf's warm-up run against each server before measuring it [default: 3s; --quick: 1s].
    #[arg(long, value_name = "TIME", value_parser = crate::args::parse_duration)]
    warmup: Option<Duration>,
    /// dnsperf client sockets (-c).
    #[arg(long, value_name = "N", default_value_t = 2)]
    clients: u32,
    /// dnsperf threads (-T) [default: the machine's cores].
    #[arg(long, value_name = "N")]
    threads: Option<u32>,
    /// Queries dnsperf keeps outstanding (-q) in the saturating run.
    #[arg(long, value_name = "N", default_value_t = 100)]
    outstanding: u32,
    /// Queries per second offered (-Q) in the run whose per-answer latencies give p50/p99.
    #[arg(long, value_name = "N", default_value_t = 50_000)]
    latency_rate: u64,
    /// Services in the fleet flotilla's memory and verdict-change latency are measured at.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    memory_services: usize,
    /// How many endpoints are marked Unhealthy (and then Healthy again) one after the other to
    /// time verdict changes [--quick: 3].
    #[arg(long, value_name = "N", default_value_t = 20)]
    verdict_changes: usize,
    /// A short run (100 services, 2 s runs, about 30 s) that proves the tool works; its figures
    /// are appended only with --output.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    out: super::report::OutputArgs,
}

/// Everything one server's turn measured.
pub struct Turn {
    /// The saturating run.
    pub saturated: perf::Run,
    /// The fixed-rate run with per-answer latencies.
    pub paced: perf::Run,
    /// Memory after both runs.
    pub memory: Option<procs::Rss>,
}

/// The settings of a run, resolved from the options.
pub struct Plan {
    services: usize,
    endpoints: usize,
    duration: Duration,
    warmup: Duration,
    load: perf::Load,
    latency_rate: u64,
    memory_services: usize,
    verdict_changes: usize,
    quick: bool,
}

/// Run the benchmark; servers it started are stopped when its future is dropped.
pub async fn run(a: DnsArgs) -> Result<()> {
    servers::check_tools()?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let plan = Plan {
        services: a.services.unwrap_or(if a.quick { 100 } else { 1_000 }),
        endpoints: a.endpoints,
        duration: a
            .duration
            .unwrap_or(Duration::from_secs(if a.quick { 2 } else { 10 })),
        warmup: a
            .warmup
            .unwrap_or(Duration::from_secs(if a.quick { 1 } else { 3 })),
        load: perf::Load {
            clients: a.clients,
            threads: a.threads.unwrap_or(cores as u32),
            outstanding: a.outstanding,
        },
        latency_rate: a.latency_rate,
        memory_services: a.memory_services,
        verdict_changes: if a.quick { 3 } else { a.verdict_changes },
        quick: a.quick,
    };
    for n in [plan.services, plan.memory_services] {
        ensure!(
            (1..=records::MAX_SERVICES).contains(&n),
            "--services and --memory-services must be 1 to {}",
            records::MAX_SERVICES
        );
    }
    ensure!(
        (1..=records::MAX_ENDPOINTS).contains(&plan.endpoints),
        "--endpoints must be 1 to {}",
        records::MAX_ENDPOINTS
    );
    ensure!(
        plan.load.clients > 0 && plan.load.threads > 0 && plan.load.outstanding > 0,
        "--clients, --threads and --outstanding must be at least 1"
    );
    super::report::warn_if_debug(a.quick);
    let output = a.out.path(a.quick);
    let when = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let load_before = super::report::load_average();
    let dir = tempfile::Builder::new()
        .prefix("flotilla-bench-dns.")
        .tempdir()
        .context("cannot create a temporary directory")?;

    let measured = tokio::select! {
        r = measure(&plan, dir.path()) => r?,
        _ = tokio::signal::ctrl_c() => bail!("interrupted; the DNS servers the benchmark started are stopped"),
    };
    let build = super::report::build();
    let section = report::Section {
        when,
        machine: super::report::machine(),
        commit: super::report::commit(),
        run: format!(
            "{} scale, {build} build of flotilla {}, dnsperf on the same machine; 1-minute load \
             average {load_before} before the run, {} after it",
            if plan.quick { "quick" } else { "full" },
            env!("CARGO_PKG_VERSION"),
            super::report::load_average()
        ),
        plan,
        measured,
    };
    let text = report::render(&section);
    super::report::publish(&text, output.as_deref())?;
    Ok(())
}

/// What [`measure`] found.
pub struct Measured {
    /// knotd's version line.
    pub knot_version: String,
    /// Names checked on both servers before measuring.
    pub checked: usize,
    /// knotd's turn, then flotilla's.
    pub knot: Turn,
    /// flotilla's turn.
    pub flotilla: Turn,
    /// flotilla's memory after load at `memory_services` services.
    pub memory_large: Result<procs::Rss, String>,
    /// Verdict changes timed at `memory_services` services.
    pub verdict: Result<verdict::Timings, String>,
}

async fn measure(plan: &Plan, dir: &Path) -> Result<Measured> {
    let progress = Progress::new("dns");
    let g = Generated::new(plan.services, plan.endpoints);
    let zone_file = dir.join("fleet.zone");
    let fleet_file = dir.join("fleet.json");
    let queries = dir.join("queries.txt");
    write(&zone_file, g.zone_file(ZONE))?;
    write(&fleet_file, serde_json::to_vec(&g.fleet(&[]))?)?;
    write(&queries, g.queries(ZONE))?;
    progress.note(&format!(
        "{} services × {} endpoints in {}",
        thousands(plan.services as u64),
        plan.endpoints,
        dir.display()
    ));
    let sample = sample_names(&g);

    let phase = progress.phase("knotd: starting and checking its answers", 1);
    let mut knot = servers::knotd(dir, ZONE, &zone_file, &sample[0].0).await?;
    let checked = check_answers(&knot, &sample).await?;
    phase.done(&format!(
        "{} at {}, {checked} names answered as generated",
        knot.pid(),
        knot.addr
    ));
    let knot_turn = turn(&mut knot, plan, &queries, &progress).await?;
    knot.stop().context("stopping knotd")?;

    let phase = progress.phase("flotilla dns: starting and checking its answers", 1);
    let mut flotilla =
        servers::flotilla(dir, ZONE, &fleet_file, &sample[0].0, "flotilla-dns.log").await?;
    check_answers(&flotilla, &sample).await?;
    phase.done(&format!(
        "{} at {}, the same {checked} names answered alike",
        flotilla.pid(),
        flotilla.addr
    ));
    let flotilla_turn = turn(&mut flotilla, plan, &queries, &progress).await?;
    flotilla.stop().context("stopping flotilla dns")?;

    let large = verdict::large(plan, dir, &progress).await;
    let (memory_large, verdict) = match large {
        Ok((m, v)) => (Ok(m), v.map_err(|e| format!("{e:#}"))),
        Err(e) => (
            Err(format!("{e:#}")),
            Err("not measured: the server did not start".into()),
        ),
    };
    Ok(Measured {
        knot_version: knot_version(),
        checked,
        knot: knot_turn,
        flotilla: flotilla_turn,
        memory_large,
        verdict,
    })
}

/// One server's warm-up, saturating run, fixed-rate run and memory.
async fn turn(
    server: &mut servers::Server,
    plan: &Plan,
    queries: &Path,
    progress: &Progress,
) -> Result<Turn> {
    let port = server.addr.port();
    let label = server.label;
    let phase = progress.phase(&format!("{label}: warm-up"), 1);
    let warm = perf::run(port, queries, &plan.load, saturating(plan.warmup)).await?;
    phase.done(&format!("{:.0} answers/s", warm.qps));
    let phase = progress.phase(&format!("{label}: saturating run"), 1);
    let saturated = perf::run(port, queries, &plan.load, saturating(plan.duration)).await?;
    server.check_alive()?;
    phase.done(&format!(
        "{:.0} answers/s, {} lost",
        saturated.qps,
        thousands(saturated.lost)
    ));
    let phase = progress.phase(
        &format!(
            "{label}: {} queries/s with per-answer latencies",
            plan.latency_rate
        ),
        1,
    );
    let pace = perf::Pace {
        duration: plan.duration,
        rate: Some(plan.latency_rate),
        per_query: true,
    };
    let paced = perf::run(port, queries, &plan.load, pace).await?;
    server.check_alive()?;
    phase.done(&match paced.latency {
        Some(l) => format!("p50 {:?}, p99 {:?}", l.p50, l.p99),
        None => "no answers".into(),
    });
    let memory = procs::rss(server.pid()).ok();
    Ok(Turn {
        saturated,
        paced,
        memory,
    })
}

fn saturating(duration: Duration) -> perf::Pace {
    perf::Pace {
        duration,
        rate: None,
        per_query: false,
    }
}

/// Names to check on both servers, with the addresses the generated records give them:
/// the global, a regional and a cluster name of services spread over the fleet.
fn sample_names(g: &Generated) -> Vec<(String, BTreeSet<IpAddr>)> {
    let n = g.services.len();
    let picks: BTreeSet<usize> = [0, n / 3, n / 2, n - 1].into_iter().collect();
    let mut out = Vec::new();
    for s in picks {
        let svc = &g.services[s];
        let all = svc.addresses.iter().map(|a| IpAddr::V4(*a)).collect();
        out.push((g.global_name(s, ZONE), all));
        let c = s % g.clusters.len();
        let one = BTreeSet::from([IpAddr::V4(svc.addresses[c])]);
        let base = format!("{}.{}", svc.name, svc.namespace);
        let cluster = &g.clusters[c];
        let region_addresses = g
            .clusters
            .iter()
            .zip(&svc.addresses)
            .filter(|(k, _)| k.region == cluster.region)
            .map(|(_, a)| IpAddr::V4(*a))
            .collect();
        out.push((
            format!("{base}.{}.{ZONE}", cluster.region),
            region_addresses,
        ));
        out.push((format!("{base}.{}.{ZONE}", cluster.name), one));
    }
    out
}

/// Ask `server` every sample name; an error naming the first answer that differs.
async fn check_answers(
    server: &servers::Server,
    sample: &[(String, BTreeSet<IpAddr>)],
) -> Result<usize> {
    let mut prober = probe::Prober::new().await?;
    for (name, want) in sample {
        let got = prober
            .ask(server.addr, name, Duration::from_secs(2))
            .await?;
        if &got.addresses != want {
            bail!(
                "{} answers {name} A with {:?} ({}), not the generated {want:?}",
                server.label,
                got.addresses,
                got.rcode
            );
        }
    }
    Ok(sample.len())
}

fn write(path: &Path, contents: impl AsRef<[u8]>) -> Result<()> {
    std::fs::write(path, contents).with_context(|| format!("cannot write {}", path.display()))
}

/// `knotd (Knot DNS), version 3.2.6` → `knotd 3.2.6`.
fn knot_version() -> String {
    servers::find("knotd")
        .and_then(|k| std::process::Command::new(k).arg("--version").output().ok())
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .and_then(|v| {
            v.split("version")
                .nth(1)
                .map(|v| format!("knotd {}", v.trim()))
        })
        .unwrap_or_else(|| "knotd".into())
}
