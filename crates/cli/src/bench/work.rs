//! `flotilla bench work`: Work delivery end to end — from a Work created on the hub to its
//! objects applied in a real member cluster and `Applied=True` reported back — through both
//! delivery paths (pull agent, push worker), and the pull agent's memory as its Works grow.
//!
//! Parts: [`fleet`] starts the hub and joins the members ([`members`] starts those when none
//! are given), [`procs`] runs and stops processes,
//! [`objects`] builds the Works, [`track`] times them through watches, [`latency`],
//! [`memory`] and [`cleanup`] are the phases, [`report`] writes the section.

mod cleanup;
mod fleet;
mod latency;
mod members;
mod memory;
mod objects;
mod procs;
mod report;
mod track;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use flotilla_apis::names::execution_namespace;
use flotilla_apis::work::v1alpha1::Work;
use kube::api::ListParams;
use kube::Api;

use super::progress::Progress;
use fleet::{Fleet, Mode};
use track::Tracker;

/// Options of `flotilla bench work`.
#[derive(Args, Debug)]
pub struct WorkArgs {
    /// A set of member clusters started with `scripts/members up 3 DIR`; its member-1,
    /// member-2 and member-3 are used and left running. Without it the benchmark starts a
    /// set itself with scripts/members of the checkout it is run from (about 15 s) and takes
    /// it down at the end.
    #[arg(long, value_name = "DIR")]
    members_dir: Option<PathBuf>,
    /// Works created in the latency phase, one ConfigMap each [default: 1000; --quick: 100].
    #[arg(long, value_name = "N")]
    works: Option<usize>,
    /// Manifests the measured agent delivers at the end of the memory phase, in Works of 100
    /// ConfigMaps [default: 10000; --quick: 1000].
    #[arg(long, value_name = "M")]
    manifests: Option<usize>,
    /// Works created per second in the latency phase (open loop).
    #[arg(long, value_name = "PER_SECOND", default_value_t = 50)]
    rate: u64,
    /// A short run (100 Works, 1,000 manifests; about a minute with members given) that proves
    /// the tool works; its figures are appended only with --output.
    #[arg(long)]
    quick: bool,
    /// Append the report to this file [default: BENCHMARKS.md at the root of the git checkout
    /// of the current directory, or in the current directory].
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the report without appending it anywhere.
    #[arg(long, conflicts_with = "output")]
    no_append: bool,
}

/// Run the benchmark. Dropping the future stops every process it started.
pub async fn run(a: WorkArgs) -> Result<()> {
    let works = a.works.unwrap_or(if a.quick { 100 } else { 1_000 });
    let manifests = a.manifests.unwrap_or(if a.quick { 1_000 } else { 10_000 });
    if works == 0 || a.rate == 0 {
        bail!("--works and --rate must be at least 1");
    }
    if cfg!(debug_assertions) && !a.quick {
        eprintln!(
            "warning: this is a debug build, whose figures say little: \
             build with `cargo build --release` and run target/release/flotilla"
        );
    }
    let output = output_path(&a);
    let run = format!("bench-{:08x}", rand::random::<u32>());
    let when = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let progress = Progress::new("work");
    // The benchmark shares the machine with its members; say how busy it was anyway.
    let load_before = super::report::load_average();

    let mut fleet = Fleet::start(a.members_dir.as_deref(), &progress).await?;
    let members = describe_members(&fleet, a.members_dir.is_some());
    let measured = measure(&mut fleet, &run, works, a.rate, manifests, &progress).await;
    let logs = fleet.dir.path().to_path_buf();
    let phases = match measured {
        Ok(phases) => phases,
        Err(e) => {
            // Keep the logs of what failed; the processes are still stopped.
            fleet.dir.disable_cleanup(true);
            drop(fleet);
            return Err(e.context(format!(
                "the hub's and agents' logs are kept in {}",
                logs.display()
            )));
        }
    };
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let section = report::Section {
        when,
        machine: super::report::machine(),
        commit: super::report::commit(),
        run: format!(
            "{} scale, {build} build of flotilla {}; the hub (SQLite), the agents, the members \
             and the load generator share this machine; 1-minute load average {} before the \
             run, {} after it",
            if a.quick { "quick" } else { "full" },
            env!("CARGO_PKG_VERSION"),
            load_before,
            super::report::load_average()
        ),
        members,
        latency: phases.latency,
        idle: phases.idle,
        memory: phases.memory,
        cleanup: phases.cleanup,
    };
    let checked = check(&section);
    if checked.is_err() {
        fleet.dir.disable_cleanup(true);
    }
    // Stopping waits for each process to exit: off the async threads.
    tokio::task::spawn_blocking(move || drop(fleet))
        .await
        .context("stopping the agents and the hub")?;
    let text = report::render(&section);
    println!("\n{text}");
    if let Some(path) = output {
        super::report::append(&path, &text)?;
        eprintln!("appended to {}", path.display());
    }
    checked.with_context(|| format!("the hub's and agents' logs are kept in {}", logs.display()))
}

/// What the phases measured, or why each failed.
struct Phases {
    latency: Result<latency::Latency, String>,
    idle: Option<procs::Rss>,
    memory: Result<memory::Memory, String>,
    cleanup: Result<cleanup::Cleanup, String>,
}

/// The phases, in order; only setup errors end it early, a failed phase is reported.
async fn measure(
    fleet: &mut Fleet,
    run: &str,
    works: usize,
    rate: u64,
    manifests: usize,
    progress: &Progress,
) -> Result<Phases> {
    let agent_pid = fleet
        .members
        .iter()
        .find(|m| m.mode == Mode::Pull)
        .and_then(|m| m.agent.as_ref().map(|a| a.pid()));
    let idle = agent_pid.map(procs::rss).transpose()?;
    let hub_works =
        Tracker::applied_works(Api::all(fleet.client.clone()), &objects::selector(run)).await?;
    let latency = latency::run(fleet, &hub_works, run, works, rate, progress).await;
    let existing = delivered(fleet, run).await?;
    let memory = memory::run(fleet, &hub_works, run, existing, manifests, progress).await;
    drop(hub_works);
    let cleanup = cleanup::run(fleet, run, agent_pid, memory::SETTLE, progress).await;
    let text = |r: anyhow::Error| format!("{r:#}");
    Ok(Phases {
        latency: latency.map_err(text),
        idle,
        memory: memory.map_err(text),
        cleanup: cleanup.map_err(text),
    })
}

/// Manifests of this run the first pull member already delivers.
async fn delivered(fleet: &Fleet, run: &str) -> Result<usize> {
    let Some(m) = fleet.members.iter().find(|m| m.mode == Mode::Pull) else {
        return Ok(0);
    };
    let api: Api<Work> = Api::namespaced(fleet.client.clone(), &execution_namespace(&m.name));
    let list = api
        .list(&ListParams::default().labels(&objects::selector(run)))
        .await
        .context("listing the Works of the latency phase")?;
    Ok(list.items.iter().map(|w| w.spec.manifests.len()).sum())
}

fn describe_members(fleet: &Fleet, given: bool) -> String {
    let each: Vec<String> = fleet
        .members
        .iter()
        .map(|m| match &m.agent {
            Some(a) => format!("{} {} (agent pid {})", m.name, m.mode.name(), a.pid()),
            None => format!("{} {} (worker in the hub)", m.name, m.mode.name()),
        })
        .collect();
    format!(
        "{}; real kube-apiservers with a shared etcd and KWOK nodes ({})",
        each.join(", "),
        if given {
            "given with --members-dir"
        } else {
            "started by the benchmark"
        }
    )
}

/// An error naming what went wrong, if anything did, after the report is out.
fn check(s: &report::Section) -> Result<()> {
    let mut problems = Vec::new();
    for (phase, failed) in [
        ("latency", s.latency.as_ref().err()),
        ("memory", s.memory.as_ref().err()),
        ("cleanup", s.cleanup.as_ref().err()),
    ] {
        if let Some(e) = failed {
            problems.push(format!("the {phase} phase failed: {e}"));
        }
    }
    if let Ok(l) = &s.latency {
        if l.not_applied.0 > 0 || l.create_errors.0 > 0 {
            problems.push(format!(
                "{} Works were not created and {} not Applied in the latency phase",
                l.create_errors.0, l.not_applied.0
            ));
        }
    }
    if let Ok(m) = &s.memory {
        if m.not_applied.0 > 0 {
            problems.push(format!(
                "{} Works were not Applied in the memory phase",
                m.not_applied.0
            ));
        }
    }
    if let Ok(c) = &s.cleanup {
        let left: usize = c.left.iter().map(|(_, n)| n).sum();
        if c.remaining > 0 || left > 0 {
            problems.push(format!(
                "cleanup left {} Works on the hub and {left} ConfigMaps in the members",
                c.remaining
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        bail!("{}; see the report above", problems.join("; "))
    }
}

/// Where to append the report, if anywhere.
fn output_path(a: &WorkArgs) -> Option<PathBuf> {
    super::report::output_path(a.no_append, a.output.as_deref(), a.quick)
}
