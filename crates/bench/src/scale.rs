//! `flotilla bench scale`: a hub with many simulated member clusters (issue 15).
//!
//! Starts `flotilla serve` (SQLite, controllers and push workers in the process) and
//! `flotilla sim --count N --hub-kubeconfig … --mode push|pull`, whose N clusters join the hub
//! (Push: the hub's push workers reach them; Pull: an agent per cluster in the simulator); times
//! how long until all N are `Ready=True` on the hub; lets the fleet settle, then reads what the
//! idle hub and simulator cost: resident memory and CPU over a window (from `/proc`). Then the
//! fleet is loaded: M Deployments Divided over placement groups of 3–10 clusters
//! ([`divided`]: Works applied per second, the hub's memory), template changes timed until
//! applied in all their clusters ([`changes`]), one loaded cluster stopped and its workloads
//! timed until moved ([`failover`]), and the namespace deleted ([`cleanup`]). Every figure is
//! printed next to the target and appended to BENCHMARKS.md.
//!
//! Parts: [`fleet`] starts and watches the two processes, [`report`] writes the section.

mod changes;
mod cleanup;
mod divided;
mod failover;
mod fleet;
mod report;

use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;

use crate::fleet::{Mode, Run};
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
    /// Deployments Divided over the fleet in the load phase [default: 10000; --quick: 100].
    #[arg(long, value_name = "M")]
    deployments: Option<usize>,
    /// Replicas of each Deployment (divided over its 3-10 clusters).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(i32).range(1..=1000))]
    replicas: i32,
    /// Templates changed in the change phase [default: 50; --quick: 10].
    #[arg(long, value_name = "K")]
    templates: Option<usize>,
    /// Changes made in the change phase [default: 1000; --quick: 50].
    #[arg(long, value_name = "N")]
    changes: Option<usize>,
    /// Changes per second (open loop).
    #[arg(long, value_name = "PER_SECOND", default_value_t = 50,
          value_parser = clap::value_parser!(u64).range(1..))]
    rate: u64,
    /// Changes per second of a lighter change phase, run before the main one on other
    /// templates for as long: the latency of a change when the hub keeps up, beside the one at
    /// `--rate`, where a backlog may form (0: no light phase).
    #[arg(long, value_name = "PER_SECOND", default_value_t = 10)]
    light_rate: u64,
    /// How the simulated clusters join the hub (pull: an agent per cluster in the simulator).
    #[arg(long, value_enum, default_value_t = Mode::Push)]
    mode: Mode,
    /// Only join and measure the idle fleet; no load, changes, failover or cleanup.
    #[arg(long)]
    idle_only: bool,
    /// A short run (20 clusters, seconds of settling, 100 Deployments, hub timings of seconds
    /// so failover is quick) that proves the tool works; its figures mean little and are
    /// appended only with --output.
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
    /// The load: Deployments and replicas of each (`None`: idle only).
    pub load: Option<(usize, i32)>,
    /// Templates, changes and their rate.
    pub changes: (usize, usize, u64),
    /// The light change phase's changes and rate, if there is one.
    pub light: Option<(usize, u64)>,
    /// The hub's cluster grace period and failover toleration.
    pub timings: (Duration, Duration),
    /// How the clusters join.
    pub mode: Mode,
}

impl Plan {
    /// How long failover may take by the target: the hub notices after the grace
    /// period, waits out the toleration, and then has 30 s.
    pub fn failover_budget(&self) -> Duration {
        self.timings.0 + self.timings.1 + Duration::from_secs(30)
    }

    /// `flotilla serve`'s timing flags for the plan.
    fn hub_args(&self, quick: bool) -> Vec<String> {
        let secs = |d: Duration| format!("{}s", d.as_secs());
        let mut args = vec![
            "--cluster-grace-period".into(),
            secs(self.timings.0),
            "--failover-toleration".into(),
            secs(self.timings.1),
        ];
        if quick {
            args.extend(["--heartbeat-interval".into(), "2s".into()]);
        }
        args
    }
}

impl Plan {
    fn of(a: &ScaleArgs) -> Plan {
        let pick = |given: Option<usize>, quick: usize, full: usize| {
            given.unwrap_or(if a.quick { quick } else { full }).max(1)
        };
        let mode = a.mode;
        let load = (!a.idle_only).then(|| (pick(a.deployments, 100, 10_000), a.replicas));
        let changes = (
            pick(a.templates, 10, 50),
            pick(a.changes, 50, 1_000),
            a.rate,
        );
        let light = light_phase(changes, a.light_rate);
        if a.quick {
            Plan {
                clusters: a.clusters.min(20),
                settle: Duration::from_secs(2),
                window: Duration::from_secs(3),
                ready_timeout: a.ready_timeout,
                load,
                changes,
                light,
                timings: (Duration::from_secs(10), Duration::from_secs(5)),
                mode,
            }
        } else {
            Plan {
                clusters: a.clusters,
                settle: a.settle,
                window: a.window,
                ready_timeout: a.ready_timeout,
                load,
                changes,
                light,
                // `flotilla serve`'s defaults.
                timings: (Duration::from_secs(40), Duration::from_secs(60)),
                mode,
            }
        }
    }
}

/// The light change phase for the main one's `(templates, changes, rate)` at `light_rate`:
/// as long as the main phase, every template changed at least once; none at rate 0 or at a
/// rate not below the main one.
fn light_phase(
    (templates, changes, rate): (usize, usize, u64),
    light_rate: u64,
) -> Option<(usize, u64)> {
    if light_rate == 0 || light_rate >= rate {
        return None;
    }
    let count = (changes as u64 * light_rate / rate) as usize;
    Some((count.max(templates), light_rate))
}

/// Run the benchmark.
pub async fn run(a: ScaleArgs) -> Result<()> {
    out::warn_if_debug(a.quick);
    let plan = Plan::of(&a);
    let output = a.out.path(a.quick);
    let progress = Progress::new("scale");
    let run = Run::begin();
    let mut set =
        fleet::SimFleet::start(&plan, &plan.hub_args(a.quick), a.quick, &progress).await?;
    let measured = async {
        let idle = measure(&mut set, &plan, &progress).await?;
        let loaded = match plan.load {
            Some(load) => Some(loaded(&mut set, &run.name, &plan, load, &progress).await?),
            None => None,
        };
        anyhow::Ok((idle, loaded))
    }
    .await;
    let (idle, loaded) = match measured {
        Ok(m) => m,
        Err(e) => {
            let tails = set.log_tails();
            set.stop();
            return Err(e.context(tails));
        }
    };
    set.stop();
    let head = run.head_sharing(
        a.quick,
        format!(
            "{} clusters of `flotilla sim` (one process), every one joined in {} mode",
            plan.clusters,
            plan.mode.sync_mode()
        ),
        "the simulator and the load generator",
    );
    let text = report::render(&head, &plan, &idle, loaded.as_ref());
    out::publish(&text, output.as_deref())?;
    report::check(&idle, loaded.as_ref(), &plan).context("the run did not complete")
}

/// What the phases after the idle window measured; a phase that failed says why.
pub struct Loaded {
    /// The Divided Deployments.
    pub load: Result<divided::Load, String>,
    /// Template changes at the light rate, if that phase ran.
    pub light: Option<Result<changes::Changes, String>>,
    /// Template changes.
    pub changes: Result<changes::Changes, String>,
    /// One cluster's failover.
    pub failover: Result<failover::Failover, String>,
    /// Deleting it all.
    pub cleanup: Result<cleanup::Cleanup, String>,
}

/// The load, change, failover and cleanup phases; only a process that died ends them early,
/// a phase that failed is reported (and the phases that need its result are not run).
async fn loaded(
    set: &mut fleet::SimFleet,
    run: &str,
    plan: &Plan,
    (deployments, replicas): (usize, i32),
    progress: &Progress,
) -> Result<Loaded> {
    let ns = format!("{run}-scale");
    let text = |e: anyhow::Error| format!("{e:#}");
    let load = divided::run(set, run, &ns, deployments, replicas, progress)
        .await
        .map_err(text);
    set.check_alive()?;
    fn skipped<T>() -> Result<T, String> {
        Err("not run: the load phase failed".to_string())
    }
    let (templates, count, rate) = plan.changes;
    // The light phase changes templates of its own (after the main phase's), so that each
    // phase's sequence numbers start from the template as the load phase left it.
    let light = match (&load, plan.light) {
        (Ok(l), Some((count, rate))) => Some(
            changes::run(
                set,
                run,
                &ns,
                l,
                (templates, templates),
                count,
                rate,
                progress,
            )
            .await
            .map_err(text),
        ),
        (Err(_), Some(_)) => Some(skipped()),
        (_, None) => None,
    };
    set.check_alive()?;
    let changes = match &load {
        Ok(l) => changes::run(set, run, &ns, l, (0, templates), count, rate, progress)
            .await
            .map_err(text),
        Err(_) => skipped(),
    };
    set.check_alive()?;
    let failover = match &load {
        Ok(l) => failover::run(set, &ns, l, plan.failover_budget(), progress)
            .await
            .map_err(text),
        Err(_) => skipped(),
    };
    set.check_alive()?;
    let cleanup = cleanup::run(set, &ns, progress).await.map_err(text);
    Ok(Loaded {
        load,
        light,
        changes,
        failover,
        cleanup,
    })
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

#[cfg(test)]
mod tests {
    use super::light_phase;

    #[test]
    fn the_light_phase_lasts_as_long_as_the_main_one_and_changes_every_template() {
        // 1,000 changes at 50/s take 20 s; at 10/s that is 200 changes.
        assert_eq!(light_phase((50, 1_000, 50), 10), Some((200, 10)));
        // Fewer changes than templates would leave some unchanged.
        assert_eq!(light_phase((50, 100, 50), 10), Some((50, 10)));
        // None when switched off, or when it would not be lighter.
        assert_eq!(light_phase((50, 1_000, 50), 0), None);
        assert_eq!(light_phase((50, 1_000, 50), 50), None);
        assert_eq!(light_phase((50, 1_000, 10), 20), None);
    }
}
