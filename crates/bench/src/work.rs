//! `flotilla bench work`: Work delivery end to end — from a Work created on the hub to its
//! objects applied in a real member cluster and `Applied=True` reported back — through both
//! delivery paths (pull agent, push worker), and the pull agent's memory as its Works grow.
//!
//! Parts: [`objects`] builds the Works, [`latency`], [`memory`] and [`cleanup`] are the
//! phases, [`report`] writes the section. The fleet (hub, agents, members), the processes and
//! the watches that time deliveries are shared with `bench propagation` ([`super::fleet`],
//! [`super::procs`], [`super::track`]).

mod cleanup;
mod latency;
mod memory;
mod objects;
mod report;

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use flotilla_apis::names::execution_namespace;
use flotilla_apis::work::v1alpha1::Work;
use kube::api::ListParams;
use kube::Api;

use super::fleet::{self, Fleet, Mode};
use super::procs;
use super::progress::Progress;
use super::track::{self, Tracker};

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
    #[command(flatten)]
    out: super::report::OutputArgs,
}

/// Run the benchmark. Dropping the future stops every process it started.
pub async fn run(a: WorkArgs) -> Result<()> {
    let works = a.works.unwrap_or(if a.quick { 100 } else { 1_000 });
    let manifests = a.manifests.unwrap_or(if a.quick { 1_000 } else { 10_000 });
    if works == 0 || a.rate == 0 {
        bail!("--works and --rate must be at least 1");
    }
    super::report::warn_if_debug(a.quick);
    let output = a.out.path(a.quick);
    let run = fleet::Run::begin();
    let progress = Progress::new("work");

    let mut fleet = Fleet::start("work", a.members_dir.as_deref(), &progress).await?;
    let members = fleet.describe(a.members_dir.is_some());
    let measured = measure(&mut fleet, &run.name, works, a.rate, manifests, &progress).await;
    let phases = match measured {
        Ok(phases) => phases,
        // Keep the logs of what failed; the processes are stopped all the same.
        Err(e) => return Err(fleet.fail(e).await),
    };
    let section = report::Section {
        head: run.head(a.quick, members),
        latency: phases.latency,
        idle: phases.idle,
        memory: phases.memory,
        cleanup: phases.cleanup,
    };
    let checked = check(&section);
    let logs = fleet.stop(checked.is_err()).await?;
    super::report::publish(&report::render(&section), output.as_deref())?;
    checked.with_context(|| fleet::logs_kept(&logs))
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
        Tracker::applied_works(Api::all(fleet.client.clone()), &track::selector(run)).await?;
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
        .list(&ListParams::default().labels(&track::selector(run)))
        .await
        .context("listing the Works of the latency phase")?;
    Ok(list.items.iter().map(|w| w.spec.manifests.len()).sum())
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
