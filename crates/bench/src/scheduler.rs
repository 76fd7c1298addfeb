//! `flotilla bench scheduler`: the scheduler's throughput in process. It builds a simulated
//! fleet of Cluster objects and a mix of bindings ([`sim`]), places every binding once with
//! `flotilla_scheduler::schedule` on one thread after a warm-up, and prints decisions per
//! second, per-decision latency, the decisions that failed (grouped by reason) and the
//! process's peak memory, next to the target; the section is appended to
//! BENCHMARKS.md like the other benchmarks'.
//!
//! A second, shorter pass times the four filter plugins alone over every cluster for a sample
//! of the bindings, so a slow run says whether the time goes to filtering or to the rest
//! (select, assign, building the per-cluster explanation).

mod sim;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use clap::Args;
use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_scheduler::{filter, schedule, Request};

use super::figures::thousands;
use super::progress::Progress;
use super::stats::{summarize, Summary};
pub use sim::fleet;
use sim::{Binding, Kind};

/// The target, decisions per second on 2 cores.
const TARGET: f64 = 2_000.0;

/// Karmada's figure, printed as the reference (not measured here).
const KARMADA: &str = "Karmada's scheduler is reported at about 20 decisions/s (not measured here)";

/// Seed of the simulated fleet and bindings: the same counts give the same input every run.
const SEED: u64 = 6;

/// Bindings whose filter plugins are timed alone.
const FILTER_SAMPLE: usize = 1_000;

/// Options of `flotilla bench scheduler`.
#[derive(Args, Debug)]
pub struct SchedulerArgs {
    /// Registered clusters in the simulated fleet [default: 1000; --quick: 100].
    #[arg(long, value_name = "N")]
    clusters: Option<usize>,
    /// Bindings to place [default: 10000; --quick: 1000].
    #[arg(long, value_name = "N")]
    bindings: Option<usize>,
    /// A short run (100 clusters, 1,000 bindings; about a second) that proves the tool works;
    /// its figures are appended only with --output.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    out: super::report::OutputArgs,
}

/// What one pass over the bindings measured.
#[derive(Debug)]
pub struct Measured {
    /// Clusters in the fleet.
    pub clusters: usize,
    /// Bindings placed (the timed pass).
    pub bindings: usize,
    /// Bindings of each placement kind.
    pub mix: BTreeMap<Kind, usize>,
    /// Wall time of the timed pass.
    pub wall: Duration,
    /// Per-decision latencies.
    pub latency: Option<Summary>,
    /// Per-decision latencies by placement kind, with the mean.
    pub by_kind: BTreeMap<Kind, (Summary, Duration)>,
    /// Failed decisions by reason (the message with numbers and names blurred), with a
    /// binding's full message as an example.
    pub errors: BTreeMap<String, (usize, String)>,
    /// Clusters chosen over all successful decisions.
    pub chosen: usize,
    /// The filter plugins alone, per binding, over the sample.
    pub filters: Option<Duration>,
    /// Mean per-decision time over the same sample, to compare with `filters`.
    pub sample_decision: Option<Duration>,
    /// Threads of the parallel pass (one per core) and its wall time: the bindings split into
    /// one contiguous share per thread, as a scheduler with one worker per core would run.
    pub parallel: Option<(usize, Duration)>,
}

impl Measured {
    /// Decisions per second over the timed pass.
    pub fn rate(&self) -> f64 {
        self.bindings as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Failed decisions.
    pub fn failed(&self) -> usize {
        self.errors.values().map(|(n, _)| n).sum()
    }
}

/// Run the benchmark (blocking: it is all computation on this thread).
pub fn run(a: SchedulerArgs) -> Result<()> {
    let clusters = a.clusters.unwrap_or(if a.quick { 100 } else { 1_000 });
    let bindings = a.bindings.unwrap_or(if a.quick { 1_000 } else { 10_000 });
    if clusters == 0 || bindings == 0 {
        bail!("--clusters and --bindings must be at least 1");
    }
    super::report::warn_if_debug(a.quick);
    let output = a.out.path(a.quick);
    let when = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let progress = Progress::new("scheduler");
    let load_before = super::report::load_average();

    let phase = progress.phase("simulating the fleet and the bindings", 2);
    let fleet = sim::fleet(clusters, SEED);
    phase.bar().inc(1);
    let work = sim::bindings(bindings, clusters, SEED);
    phase.done(&format!(
        "{} clusters, {} bindings",
        thousands(clusters as u64),
        thousands(bindings as u64)
    ));
    let m = measure(&fleet, &work, &progress);
    let (rss, hwm) = memory();

    let build = super::report::build();
    let section = Section {
        when,
        machine: super::report::machine(),
        commit: super::report::commit(),
        run: format!(
            "{} scale, {build} build of flotilla {}, in process (no API server); \
             1-minute load average {load_before} before the run, {} after it",
            if a.quick { "quick" } else { "full" },
            env!("CARGO_PKG_VERSION"),
            super::report::load_average()
        ),
        measured: m,
        rss,
        hwm,
    };
    let text = render(&section);
    super::report::publish(&text, output.as_deref())?;
    Ok(())
}

/// Warm up, then time every binding; then time the filter plugins alone on a sample.
pub fn measure(fleet: &[Cluster], work: &[Binding], progress: &Progress) -> Measured {
    let requests: Vec<Request<'_>> = work.iter().map(request).collect();
    let mut mix = BTreeMap::new();
    for b in work {
        *mix.entry(b.kind).or_insert(0) += 1;
    }

    // Warm-up: caches, allocator arenas, branch predictors; a tenth of the bindings.
    let warm = (requests.len() / 10).max(1);
    let phase = progress.phase("warm-up", warm as u64);
    for r in requests.iter().take(warm) {
        std::hint::black_box(schedule(r, fleet));
    }
    phase.done(&format!("{} decisions", thousands(warm as u64)));

    let phase = progress.phase("placing every binding", requests.len() as u64);
    let mut latencies = Vec::with_capacity(requests.len());
    let mut per_kind: BTreeMap<Kind, Vec<Duration>> = BTreeMap::new();
    let mut errors: BTreeMap<String, (usize, String)> = BTreeMap::new();
    let mut chosen = 0;
    let started = Instant::now();
    for (i, r) in requests.iter().enumerate() {
        let t = Instant::now();
        let d = schedule(r, fleet);
        let took = t.elapsed();
        latencies.push(took);
        per_kind.entry(work[i].kind).or_default().push(took);
        match d.error {
            Some(e) => {
                let entry = errors.entry(blur(&e)).or_insert((0, e));
                entry.0 += 1;
            }
            None => chosen += d.clusters.len(),
        }
        if i % 256 == 0 {
            phase.bar().set_position(i as u64);
        }
    }
    let wall = started.elapsed();
    let failed: usize = errors.values().map(|(n, _)| n).sum();
    phase.done(&format!(
        "{:.0} decisions/s, {} failed",
        requests.len() as f64 / wall.as_secs_f64().max(1e-9),
        thousands(failed as u64)
    ));

    let sample = &requests[..requests.len().min(FILTER_SAMPLE)];
    let phase = progress.phase("timing the filter plugins alone", sample.len() as u64);
    let started = Instant::now();
    for r in sample {
        std::hint::black_box(filters(r, fleet));
    }
    let filter_time = started.elapsed();
    let started = Instant::now();
    for r in sample {
        std::hint::black_box(schedule(r, fleet));
    }
    let decision_time = started.elapsed();
    let per = |d: Duration| d.checked_div(sample.len() as u32);
    phase.done(&format!(
        "{:.1} µs of filtering per binding",
        micros(per(filter_time).unwrap_or_default())
    ));

    // Decisions are independent (no shared state), so a scheduler runs one worker per core.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parallel = (threads > 1).then(|| {
        let phase = progress.phase(&format!("placing every binding on {threads} threads"), 1);
        let share = requests.len().div_ceil(threads);
        let started = Instant::now();
        std::thread::scope(|scope| {
            for chunk in requests.chunks(share) {
                scope.spawn(move || {
                    for r in chunk {
                        std::hint::black_box(schedule(r, fleet));
                    }
                });
            }
        });
        let wall = started.elapsed();
        phase.done(&format!(
            "{:.0} decisions/s",
            requests.len() as f64 / wall.as_secs_f64().max(1e-9)
        ));
        (threads, wall)
    });

    Measured {
        clusters: fleet.len(),
        bindings: requests.len(),
        mix,
        wall,
        latency: summarize(latencies),
        by_kind: per_kind
            .into_iter()
            .filter_map(|(k, v)| {
                let mean = v.iter().sum::<Duration>().checked_div(v.len() as u32)?;
                Some((k, (summarize(v)?, mean)))
            })
            .collect(),
        errors,
        chosen,
        filters: per(filter_time),
        sample_decision: per(decision_time),
        parallel,
    }
}

/// The scheduler's request for a binding placed for the first time.
fn request(b: &Binding) -> Request<'_> {
    Request {
        eviction: None,
        cluster_sets: None,
        placement: &b.placement,
        gvk: b.gvk,
        replicas: b.replicas,
        replica_request: b.request.clone(),
        current: Vec::new(),
        rebalance: false,
    }
}

/// The framework's filter step redone with the public plugins: how many clusters pass.
fn filters(r: &Request<'_>, fleet: &[Cluster]) -> usize {
    let (group, version, kind) = r.gvk;
    let gv = if group.is_empty() {
        version.to_owned()
    } else {
        format!("{group}/{version}")
    };
    let p = r.placement;
    fleet
        .iter()
        .filter(|c| {
            p.cluster_affinity
                .as_ref()
                .is_none_or(|a| filter::affinity(a, c).is_ok())
                && filter::tolerations(&p.cluster_tolerations, c).is_ok()
                && filter::api_enablement(&gv, kind, c).is_ok()
                && filter::ready(c).is_ok()
        })
        .count()
}

/// An error message with its numbers and quoted names replaced, so equal causes group.
fn blur(e: &str) -> String {
    let mut out = String::with_capacity(e.len());
    let mut quoted = false;
    for ch in e.chars() {
        match ch {
            '"' => {
                quoted = !quoted;
                if quoted {
                    out.push_str("\"…\"");
                }
            }
            _ if quoted => {}
            '0'..='9' => {
                if !out.ends_with('N') {
                    out.push('N');
                }
            }
            _ => out.push(ch),
        }
    }
    out
}

/// VmRSS and VmHWM (peak) of this process in bytes, from /proc/self/status.
fn memory() -> (Option<u64>, Option<u64>) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|kb| kb.parse::<u64>().ok())
            .map(|kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(|| "unknown".into(), super::figures::mib)
}

// === the report ===

/// Everything the section says.
struct Section {
    when: String,
    machine: String,
    commit: String,
    run: String,
    measured: Measured,
    rss: Option<u64>,
    hwm: Option<u64>,
}

fn render(s: &Section) -> String {
    let m = &s.measured;
    let mut out = format!(
        "## {} — Scheduler (`flotilla bench scheduler`) — commit {}\n\n- Machine: {}\n- Run: {}\n\
         - Input: {} simulated Clusters (5 regions × 3 zones, 3 providers, env/tier/team labels, \
         5% tainted NoSchedule, 3% PreferNoSchedule, 3% not Ready, 21 group-versions each, \
         resource summaries with 5 replica estimates) and {} bindings placed for the first time \
         (replicas 1–50, 10% tolerating the NoSchedule taint):",
        s.when,
        s.commit,
        s.machine,
        s.run,
        thousands(m.clusters as u64),
        thousands(m.bindings as u64),
    );
    for (kind, n) in &m.mix {
        out += &format!(" {} {};", thousands(*n as u64), kind.describe());
    }
    out.pop();
    out += ".\n\n| figure | value | target |\n|---|---|---|\n";
    let rate = m.rate();
    out += &format!(
        "| decisions/s (one thread, after a warm-up of a tenth of the bindings) | {rate:.0} | \
         ≥ {TARGET:.0} on 2 cores ({}) |\n",
        if rate >= TARGET { "met" } else { "NOT met" }
    );
    if let Some((threads, wall)) = m.parallel {
        let rate = m.bindings as f64 / wall.as_secs_f64().max(1e-9);
        out += &format!(
            "| decisions/s on {threads} threads (one per core; the bindings split evenly) | \
             {rate:.0} | ≥ {TARGET:.0} on 2 cores ({}) |\n",
            if rate >= TARGET { "met" } else { "NOT met" }
        );
    }
    if let Some(l) = m.latency {
        out += &format!(
            "| per-decision p50 / p99 / max | {:.0} µs / {:.0} µs / {:.0} µs | – |\n",
            micros(l.p50),
            micros(l.p99),
            micros(l.max)
        );
    }
    for (kind, (l, mean)) in &m.by_kind {
        out += &format!(
            "| — {}: mean / p50 / p99 | {:.0} µs / {:.0} µs / {:.0} µs | – |\n",
            kind.describe(),
            micros(*mean),
            micros(l.p50),
            micros(l.p99)
        );
    }
    out += &format!(
        "| failed decisions | {} of {} | few, explained |\n",
        thousands(m.failed() as u64),
        thousands(m.bindings as u64)
    );
    out += &format!(
        "| clusters chosen per successful decision (mean) | {:.1} | – |\n",
        m.chosen as f64 / (m.bindings - m.failed()).max(1) as f64
    );
    if let (Some(f), Some(d)) = (m.filters, m.sample_decision) {
        out += &format!(
            "| filter plugins alone, per binding (first {} bindings) | {:.0} µs of {:.0} µs per \
             decision ({:.0}%) | – |\n",
            thousands(m.bindings.min(FILTER_SAMPLE) as u64),
            micros(f),
            micros(d),
            100.0 * f.as_secs_f64() / d.as_secs_f64().max(1e-12)
        );
    }
    out += &format!(
        "| process memory, VmRSS at the end / VmHWM (peak) | {} / {} | – |\n",
        mib(s.rss),
        mib(s.hwm)
    );
    out += &format!("\nReference: {KARMADA}.\n");
    if !m.errors.is_empty() {
        out += "\nFailed decisions by reason:\n\n";
        for (n, example) in m.errors.values() {
            out += &format!(
                "- {}× {}\n",
                thousands(*n as u64),
                example.replace('\n', " ")
            );
        }
    }
    out
}

#[cfg(test)]
mod tests;
