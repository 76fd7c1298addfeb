//! `flotilla bench scale`: a hub with many simulated member clusters (issue 15).
//!
//! Starts `flotilla serve` (SQLite, controllers and push workers in the process) and
//! `flotilla sim --count N --hub-kubeconfig …`, whose N clusters join the hub in Push mode; times
//! how long until all N are `Ready=True` on the hub; lets the fleet settle, then reads what the
//! idle hub and simulator cost: resident memory and CPU over a window (from `/proc`). Every
//! figure is printed next to the target and appended to BENCHMARKS.md.
//!
//! Parts: [`fleet`] starts and watches the two processes, [`report`] writes the section.

mod fleet;
mod report;

use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::fleet::Run;
use crate::procs::cpu;
use crate::progress::Progress;
use crate::report as out;

pub use self::report::Idle;

/// Options of `flotilla bench scale`.
#[derive(Args, Debug)]
pub struct ScaleArgs {
    /// How many simulated member clusters join the hub.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    clusters: u32,
    /// How long the fleet idles after it is Ready before the idle figures are read.
    #[arg(long, default_value = "20s", value_parser = crate::args::parse_duration)]
    settle: Duration,
    /// Over how long the idle CPU is averaged.
    #[arg(long, default_value = "30s", value_parser = crate::args::parse_duration)]
    window: Duration,
    /// Give up when the clusters are not all Ready within this long of the simulator's start.
    #[arg(long, default_value = "5m", value_parser = crate::args::parse_duration)]
    ready_timeout: Duration,
    /// A short run (20 clusters, seconds of settling) that proves the tool works; its figures
    /// mean little and are appended only with --output.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    out: out::OutputArgs,
}

/// Settings of one run, after `--quick`.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Simulated clusters.
    pub clusters: u32,
    /// Idle before measuring.
    pub settle: Duration,
    /// CPU averaging window.
    pub window: Duration,
    /// Ready deadline.
    pub ready_timeout: Duration,
}

impl Plan {
    fn of(a: &ScaleArgs) -> Plan {
        if a.quick {
            Plan {
                clusters: a.clusters.min(20),
                settle: Duration::from_secs(2),
                window: Duration::from_secs(3),
                ready_timeout: a.ready_timeout,
            }
        } else {
            Plan {
                clusters: a.clusters,
                settle: a.settle,
                window: a.window,
                ready_timeout: a.ready_timeout,
            }
        }
    }
}

/// Run the benchmark.
pub async fn run(a: ScaleArgs) -> Result<()> {
    out::warn_if_debug(a.quick);
    let plan = Plan::of(&a);
    let output = a.out.path(a.quick);
    let progress = Progress::new("scale");
    let run = Run::begin();
    let mut set = fleet::SimFleet::start(plan.clusters, &progress).await?;
    let idle = match measure(&mut set, &plan, &progress).await {
        Ok(idle) => idle,
        Err(e) => {
            let tails = set.log_tails();
            set.stop();
            return Err(e.context(tails));
        }
    };
    set.stop();
    let head = run.head(
        a.quick,
        format!(
            "{} clusters of `flotilla sim` (one process), every one joined in Push mode",
            plan.clusters
        ),
    );
    let text = report::render(&head, &plan, &idle);
    out::publish(&text, output.as_deref())?;
    report::check(&idle, &plan).context("the run did not complete")
}

/// Join, then the idle figures.
async fn measure(set: &mut fleet::SimFleet, plan: &Plan, progress: &Progress) -> Result<Idle> {
    let ready_after = set
        .wait_ready(plan.clusters, plan.ready_timeout, progress)
        .await?;
    let phase = progress.phase(
        &format!(
            "idle: settling {} s, then CPU over {} s",
            plan.settle.as_secs(),
            plan.window.as_secs()
        ),
        plan.window.as_secs(),
    );
    tokio::time::sleep(plan.settle).await;
    set.check_alive()?;
    let (hub, sim) = (set.hub.pid(), set.sim.pid());
    let before = (cpu::own(hub), cpu::own(sim));
    let started = std::time::Instant::now();
    let window = plan.window;
    while started.elapsed() < window {
        tokio::time::sleep(Duration::from_secs(1).min(window)).await;
        phase.bar().set_position(started.elapsed().as_secs());
    }
    let took = started.elapsed().as_secs_f64();
    let after = (cpu::own(hub), cpu::own(sim));
    set.check_alive()?;
    let still_ready = set.ready_count().await?;
    let idle = Idle {
        ready_after,
        still_ready,
        hub_cpu: (after.0 - before.0).max(0.0) / took,
        sim_cpu: (after.1 - before.1).max(0.0) / took,
        hub_rss: crate::procs::rss(hub)?,
        sim_rss: crate::procs::rss(sim)?,
        hub_fds: open_fds(hub),
    };
    phase.done(&format!(
        "hub {:.0}% of a core, {} MB",
        idle.hub_cpu * 100.0,
        idle.hub_rss.now / 1_000_000
    ));
    Ok(idle)
}

/// How many files a process has open (`None` when /proc does not say).
fn open_fds(pid: u32) -> Option<usize> {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()
        .map(|d| d.count())
}
