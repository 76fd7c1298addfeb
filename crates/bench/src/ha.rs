//! `flotilla bench ha`: the active-active hub of issue 14 — replicas of this binary sharing one
//! PostgreSQL and one nats-server, started with the checkout's `scripts/ha` ([`set`]).
//!
//! In order, with replicas running the API plane only (`--no-controllers`):
//! 1. creates/s of 16 closed-loop clients against one replica, then spread over three, and
//!    where the CPU went ([`load`], [`cpu`]); each run on a set of its own started empty
//!    (`scripts/ha up 1`, `up 3`), in alternating rounds, since one pair of runs on a small
//!    shared machine moves by more than the difference it is meant to show: the ratio
//!    reported is the median round's;
//!
//! then on one set of 3:
//! 2. cross-replica watch delivery: creates through replica-2 and -3, a watch on replica-1
//!    ([`delivery`], [`watch`]);
//! 3. and 4. replica-2 killed under its watchers and a writer: time to every watcher resumed
//!    on replica-3, and acknowledged creates lost ([`failover`]);
//! 5. controller takeover between two `flotilla controllers` processes, when this build has
//!    that command ([`takeover`]).
//!
//! Each set is taken down (`scripts/ha down`) at its end, on error and on Ctrl-C; the replicas'
//! logs are kept when the run fails or with `--keep`. The figures are printed and appended to
//! BENCHMARKS.md ([`report`]).

mod commits;
mod cpu;
mod delivery;
mod failover;
mod load;
mod report;
mod set;
mod takeover;
mod watch;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::client::Client;
use super::progress::Progress;
use cpu::Usage;
use set::HaSet;

/// Options of `flotilla bench ha`.
#[derive(Args, Debug)]
pub struct HaArgs {
    /// The flotilla checkout's scripts directory, where `ha` is.
    #[arg(long, value_name = "DIR", default_value = "scripts")]
    scripts: PathBuf,
    /// Concurrent clients of the throughput runs.
    #[arg(long, value_name = "N", default_value_t = 16)]
    clients: usize,
    /// Rounds of the throughput pair (1 replica, then 3); the ratio reported is the median
    /// round's [default: 3; --quick: 1].
    #[arg(long, value_name = "N")]
    rounds: Option<usize>,
    /// Creates per second in the watch-delivery and failover phases (open loop).
    #[arg(long, value_name = "PER_SECOND", default_value_t = 200)]
    rate: u64,
    /// Watchers on the replica that is killed [default: 20; --quick: 5].
    #[arg(long, value_name = "N")]
    watchers: Option<usize>,
    /// Run the replica set in this directory and keep the replicas' and controllers' logs there
    /// [default: a temporary directory, removed at the end unless the run fails].
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// A short run (3 s throughput runs, about a minute and a half) that proves the tool works;
    /// its figures are appended only with --output.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    out: super::report::OutputArgs,
}

/// The settings of a run, resolved from the options.
pub struct Plan {
    clients: usize,
    rounds: usize,
    throughput: Duration,
    warmup: Duration,
    rate: u64,
    delivery: Duration,
    watchers: usize,
    failover: failover::Shape,
}

/// Run the benchmark; the set it started is taken down when its future ends or is dropped.
pub async fn run(a: HaArgs) -> Result<()> {
    let script = set::find_script(&a.scripts)?;
    if a.clients == 0 || a.rate == 0 || a.watchers == Some(0) || a.rounds == Some(0) {
        bail!("--clients, --rounds, --rate and --watchers must be at least 1");
    }
    let quick = a.quick;
    let secs = |full: u64, short: f64| {
        if quick {
            Duration::from_secs_f64(short)
        } else {
            Duration::from_secs(full)
        }
    };
    let watchers = a.watchers.unwrap_or(if quick { 5 } else { 20 });
    let plan = Plan {
        clients: a.clients,
        rounds: a.rounds.unwrap_or(if quick { 1 } else { 3 }),
        throughput: secs(15, 3.0),
        warmup: secs(3, 1.0),
        rate: a.rate,
        delivery: secs(10, 3.0),
        watchers,
        failover: failover::Shape {
            watchers,
            rate: a.rate,
            duration: secs(15, 6.0),
            kill_after: secs(5, 2.0),
        },
    };
    super::report::warn_if_debug(quick);
    let output = a.out.path(quick);
    let when = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let commit = super::report::commit();
    let load_before = super::report::load_average();
    let (base, temp) = match &a.keep {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
            (std::fs::canonicalize(dir)?, None)
        }
        None => {
            let t = tempfile::Builder::new()
                .prefix("flotilla-bench-ha.")
                .tempdir()
                .context("cannot create a temporary directory")?;
            (t.path().to_path_buf(), Some(t))
        }
    };

    let measured = tokio::select! {
        r = measure(&plan, &script, &base) => r,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted; the replica set is taken down")),
    };
    let logs = base.join("logs");
    let keep_logs = |e: anyhow::Error| {
        if let Some(mut t) = temp {
            t.disable_cleanup(true);
        }
        e.context(format!("the replicas' logs are kept in {}", logs.display()))
    };
    let measured = measured.map_err(keep_logs)?;
    let build = super::report::build();
    let section = report::Section {
        when,
        machine: super::report::machine(),
        commit,
        run: format!(
            "{} scale, {build} build of flotilla {}; 1-minute load average {load_before} before \
             the run, {} after it",
            if quick { "quick" } else { "full" },
            env!("CARGO_PKG_VERSION"),
            super::report::load_average()
        ),
        plan,
        measured,
    };
    super::report::publish(&report::render(&section), output.as_deref())?;
    let rounds = section.measured.rounds.iter().enumerate();
    let failed: Vec<String> = rounds
        .flat_map(|(i, r)| {
            [
                (format!("round {}, 1 replica", i + 1), r.one.as_ref().err()),
                (
                    format!("round {}, 3 replicas", i + 1),
                    r.three.as_ref().err(),
                ),
            ]
        })
        .chain([
            (
                "watch delivery".to_string(),
                section.measured.delivery.as_ref().err(),
            ),
            (
                "failover".to_string(),
                section.measured.failover.as_ref().err(),
            ),
            (
                "takeover".to_string(),
                section
                    .measured
                    .takeover
                    .as_ref()
                    .err()
                    .filter(|e| !e.starts_with("not measured")),
            ),
        ])
        .filter_map(|(what, e)| e.map(|e| format!("{what}: {e}")))
        .collect();
    if !failed.is_empty() {
        bail!(
            "some phases failed; see the report above: {}",
            failed.join("; ")
        );
    }
    Ok(())
}

/// The throughput rounds, each run on a fresh set; then the other phases on one set of 3.
async fn measure(plan: &Plan, script: &Path, base: &Path) -> Result<report::Measured> {
    let progress = Progress::new("ha");
    let run = format!("ha-{:08x}", rand::random::<u32>());
    let text = |e: anyhow::Error| format!("{e:#}");
    let mut rounds = Vec::with_capacity(plan.rounds);
    for i in 1..=plan.rounds {
        let one = fresh_throughput(plan, script, base, 1, format!("one-{i}"), &run, &progress)
            .await
            .map_err(text);
        let three = fresh_throughput(plan, script, base, 3, format!("three-{i}"), &run, &progress)
            .await
            .map_err(text);
        rounds.push(report::Round { one, three });
    }
    let mut set = up(script, base, "set", 3, &progress).await?;
    let measured = phases(&mut set, plan, &run, &progress, rounds).await;
    down(set, measured).await
}

/// Take `set` down, then give `result` (its error first, then the take-down's).
async fn down<T>(mut set: HaSet, result: Result<T>) -> Result<T> {
    let down = tokio::task::spawn_blocking(move || set.down())
        .await
        .context("taking the replica set down")?;
    let result = result?;
    down?;
    Ok(result)
}

/// `scripts/ha up N` in `BASE/NAME`, its logs kept in `BASE/logs/NAME`.
async fn up(
    script: &Path,
    base: &Path,
    name: &str,
    n: usize,
    progress: &Progress,
) -> Result<HaSet> {
    let phase = progress.phase(
        &format!("scripts/ha up {n} (PostgreSQL, nats-server, {n} replica(s))"),
        1,
    );
    let (script, dir, logs) = (
        script.to_path_buf(),
        base.join(name),
        base.join("logs").join(name),
    );
    let set = tokio::task::spawn_blocking(move || HaSet::up(&script, &dir, &logs, n, true))
        .await
        .context("starting the replica set")??;
    phase.done(&format!(
        "replica pids {}",
        set.replicas
            .iter()
            .map(|r| r.pid.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(set)
}

/// One throughput run on a set of `n` replicas of its own, started empty for it and taken
/// down after it: every run starts from the same state (an empty database, replicas that have
/// just started), which a set reused across runs, holding every earlier run's objects and with
/// replicas restarted between runs, does not give.
async fn fresh_throughput(
    plan: &Plan,
    script: &Path,
    base: &Path,
    n: usize,
    name: String,
    run: &str,
    progress: &Progress,
) -> Result<report::Run> {
    let set = up(script, base, &name, n, progress).await?;
    let r = measure_throughput(&set, plan, &format!("{run}-{name}"), progress).await;
    down(set, r).await
}

/// The phases after the throughput rounds, in order; a failed phase is reported and the next
/// one runs.
async fn phases(
    set: &mut HaSet,
    plan: &Plan,
    run: &str,
    progress: &Progress,
    rounds: Vec<report::Round>,
) -> Result<report::Measured> {
    let text = |e: anyhow::Error| format!("{e:#}");
    let clients: Vec<Client> = set.replicas.iter().map(|r| r.client.clone()).collect();
    let ns = format!("{run}-watch");
    let phase = progress.phase(
        &format!(
            "watch on replica-1, {}/s creates through replica-2 and -3",
            plan.rate
        ),
        1,
    );
    let delivery = match load::namespace(&clients[0], &ns).await {
        Ok(()) => {
            delivery::run(
                &clients[0],
                &clients[1..],
                &ns,
                plan.rate,
                plan.delivery,
                phase.bar(),
            )
            .await
        }
        Err(e) => Err(e),
    };
    phase.done(&match &delivery {
        Ok(d) => match d.latency {
            Some(l) => format!("p50 {:?}, p99 {:?}, max {:?}", l.p50, l.p99, l.max),
            None => "no event arrived".into(),
        },
        Err(e) => format!("failed: {e:#}"),
    });
    let delivery = delivery.map_err(text);

    let failover = failover::run(set, &format!("{run}-failover"), &plan.failover, progress)
        .await
        .map_err(text);

    let takeover = match takeover::available() {
        Ok(true) => {
            let r = &set.replicas[0];
            takeover::run(&r.client, &r.kubeconfig, set.logs(), progress)
                .await
                .map_err(text)
        }
        Ok(false) => Err("not measured: this build has no `flotilla controllers` command".into()),
        Err(e) => Err(format!("not measured: {e}")),
    };
    if let Err(e) = &takeover {
        progress.note(&format!("controller takeover {e}"));
    }
    Ok(report::Measured {
        rounds,
        delivery,
        failover,
        takeover,
    })
}

/// The warm-up, then the measured run with the CPU each part used, with the clients spread
/// over every replica of `set`.
async fn measure_throughput(
    set: &HaSet,
    plan: &Plan,
    ns: &str,
    progress: &Progress,
) -> Result<report::Run> {
    let clients: Vec<Client> = set.replicas.iter().map(|r| r.client.clone()).collect();
    load::namespace(&clients[0], ns).await?;
    let name = format!(
        "{} clients on {} replica(s)",
        plan.clients,
        set.replicas.len()
    );
    let phase = progress.phase(&format!("{name}: warm-up"), 1);
    let warm =
        load::closed_loop(&clients, ns, "warm", plan.clients, plan.warmup, phase.bar()).await;
    phase.done(&format!("{:.0} creates/s", warm.rate()));
    let pids: Vec<u32> = set.replicas.iter().map(|r| r.pid).collect();
    let phase = progress.phase(&format!("{name}: creates"), 1);
    let commits = commits::Commits::now(&clients).await;
    let before = Usage::now(&pids, set.postgres_pid, set.nats_pid);
    let t = load::closed_loop(
        &clients,
        ns,
        "c",
        plan.clients,
        plan.throughput,
        phase.bar(),
    )
    .await;
    let used = Usage::now(&pids, set.postgres_pid, set.nats_pid).since(&before);
    let commits = commits::Commits::now(&clients).await.since(&commits);
    phase.done(&format!("{:.0} creates/s, {} failed", t.rate(), t.errors));
    if t.done == 0 {
        bail!(
            "no create succeeded: {}",
            t.first_error.as_deref().unwrap_or("no error reported")
        );
    }
    Ok((t, used, commits))
}
