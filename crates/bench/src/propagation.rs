//! `flotilla bench propagation`: propagation end to end — from a template and a
//! PropagationPolicy on the hub, through the hub's controllers (detector, scheduler, binding
//! controller) and the delivery paths (pull agents, push worker), to the objects in three real
//! member clusters — against issue 6's targets: how long a template change takes to reach
//! every member, and what the hub holds in memory with 10,000 Deployments propagated.
//!
//! With `--peer karmada` the same phases run a second time on the same members against
//! Karmada's control plane (built from its Go module and started by scripts/karmada, the members
//! joined in Push mode), and the report puts the two side by side.
//!
//! Parts: [`objects`] builds the namespaces, policies and Deployments; [`latency`], [`memory`]
//! and [`cleanup`] are the phases; [`report`] writes the section. The fleet, the processes,
//! the watches and the open-loop load are shared with `bench work`.

pub(crate) mod cleanup;
pub(crate) mod latency;
pub(crate) mod memory;
pub(crate) mod objects;
mod report;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use flotilla_apis::cluster::v1alpha1::Cluster;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::ListParams;
use kube::{Api, Client};

use super::fleet::{self, Fleet};
use super::procs;
use super::progress::Progress;

/// How long the members get to report the API the benchmark propagates.
const APIS_TIMEOUT: Duration = Duration::from_secs(60);

/// Options of `flotilla bench propagation`.
#[derive(Args, Debug)]
pub struct PropagationArgs {
    /// A set of member clusters started with `scripts/members up 3 DIR`; its member-1,
    /// member-2 and member-3 are used and left running. Without it the benchmark starts a
    /// set itself with scripts/members of the checkout it is run from (about 15 s) and takes
    /// it down at the end.
    #[arg(long, value_name = "DIR")]
    members_dir: Option<PathBuf>,
    /// Deployments (1 replica each) created first and then changed in the latency phase
    /// [default: 100; --quick: 20].
    #[arg(long, value_name = "K")]
    templates: Option<usize>,
    /// Template changes made in the latency phase [default: 1000; --quick: 100].
    #[arg(long, value_name = "N")]
    changes: Option<usize>,
    /// Templates created and changes made per second in the latency phase (open loop).
    #[arg(long, value_name = "PER_SECOND", default_value_t = 20)]
    rate: u64,
    /// Deployments (0 replicas) propagated to the 3 members in the scale phase, where the
    /// hub's memory and throughput are measured [default: 10000; --quick: 300].
    #[arg(long, value_name = "M")]
    deployments: Option<usize>,
    /// A short run (20 templates, 100 changes, 300 Deployments; 1–2 minutes) that proves the
    /// tool works; its figures are appended only with --output.
    #[arg(long)]
    quick: bool,
    /// Also measure a peer control plane on the same members, in the same run, and report
    /// the two side by side. `karmada`: Karmada's control plane built from its Go module
    /// (scripts/karmada build; 10-20 minutes the first time on a machine), the members
    /// joined to it in Push mode with `karmadactl join`.
    #[arg(long, value_enum, value_name = "PEER")]
    peer: Option<Peer>,
    /// flotilla's policies' rolloutStrategy: `all` (the default: every change to every
    /// cluster at once) or `progressive` (type Progressive with maxConcurrency 100%: the same
    /// outcome through revisions and health gates, to measure what they cost). Not applied to
    /// a peer.
    #[arg(long, value_enum, default_value = "all")]
    rollout: Rollout,
    #[command(flatten)]
    out: super::report::OutputArgs,
}

/// How flotilla's policies roll changes out (`--rollout`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rollout {
    /// `type: All`.
    All,
    /// `type: Progressive`, `maxConcurrency: 100%`.
    Progressive,
}

/// A control plane measured beside flotilla.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// Karmada (the version pinned in tools/karmada/go.mod).
    Karmada,
}

/// Run the benchmark. Dropping the future stops every process it started.
pub async fn run(a: PropagationArgs) -> Result<()> {
    let templates = a.templates.unwrap_or(if a.quick { 20 } else { 100 });
    let changes = a.changes.unwrap_or(if a.quick { 100 } else { 1_000 });
    let deployments = a.deployments.unwrap_or(if a.quick { 300 } else { 10_000 });
    if templates == 0 || changes == 0 || deployments == 0 || a.rate == 0 {
        bail!("--templates, --changes, --deployments and --rate must be at least 1");
    }
    super::report::warn_if_debug(a.quick);
    let output = a.out.path(a.quick);
    let run = fleet::Run::begin();
    let progress = Progress::new("propagation");

    // The peer runs on the same members, so they must outlive flotilla's fleet: started here
    // when not given.
    let started = match (&a.members_dir, a.peer) {
        (None, Some(_)) => {
            let dir = tempfile::Builder::new()
                .prefix("flotilla-bench-propagation-members-")
                .tempdir()
                .context("cannot create a temporary directory for the members")?;
            let set = super::members::start(&dir.path().join("members"), &progress).await?;
            Some((dir, set))
        }
        _ => None,
    };
    let members_dir = match &started {
        Some((_, set)) => Some(set.dir().to_path_buf()),
        None => a.members_dir.clone(),
    };
    let scale = Scale {
        templates,
        changes,
        rate: a.rate,
        deployments,
        rollout: match a.rollout {
            Rollout::All => None,
            // Every cluster at once, through the progressive machinery: its cost alone.
            Rollout::Progressive => Some(serde_json::json!({
                "type": "Progressive", "maxConcurrency": "100%",
            })),
        },
    };
    let mut fleet = Fleet::start("propagation", members_dir.as_deref(), &progress).await?;
    let members = fleet.describe(a.members_dir.is_some());
    let flotilla = match measure(&mut fleet, &run.name, &scale, &progress).await {
        Ok(m) => m,
        // Keep the logs of what failed; the processes are stopped all the same.
        Err(e) => return Err(fleet.fail(e).await),
    };
    let mut failed = check("flotilla", &flotilla, true);
    let wanted = procs::logs_wanted();
    let logs = fleet.stop(failed.is_err() || wanted).await?;
    if failed.is_ok() && wanted {
        progress.note(&fleet::logs_kept(&logs));
    }
    failed = failed.with_context(|| fleet::logs_kept(&logs));

    let peer = match (a.peer, &members_dir) {
        (Some(Peer::Karmada), Some(dir)) => {
            let measured = measure_karmada(dir, &format!("{}k", run.name), &scale, &progress).await;
            if let Ok((_, m)) = &measured {
                if let (Ok(()), Err(e)) = (&failed, check("Karmada", m, false)) {
                    failed = Err(e);
                }
            }
            Some(measured.map_err(|e| format!("{e:#}")))
        }
        _ => None,
    };
    drop(started);
    let section = report::Section {
        head: run.head(a.quick, members),
        flotilla,
        peer,
    };
    super::report::publish(&report::render(&section), output.as_deref())?;
    failed
}

/// The phases against Karmada on the members of `members_dir`: its description and what they
/// measured. Karmada is taken down afterwards either way.
async fn measure_karmada(
    members_dir: &std::path::Path,
    run: &str,
    scale: &Scale,
    progress: &Progress,
) -> Result<(String, report::Measured)> {
    let mut fleet = Fleet::start_karmada("propagation", members_dir, progress).await?;
    let describe = fleet.hub.describe();
    // Karmada's policies have no rollout strategy.
    let scale = Scale {
        rollout: None,
        ..scale.clone()
    };
    match measure(&mut fleet, run, &scale, progress).await {
        Ok(m) => {
            fleet.stop(false).await?;
            Ok((describe, m))
        }
        Err(e) => Err(fleet.fail(e).await),
    }
}

/// How much the phases do.
/// The sizes of the phases, and the policy's rollout strategy.
#[derive(Clone)]
pub(crate) struct Scale {
    pub templates: usize,
    pub changes: usize,
    pub rate: u64,
    pub deployments: usize,
    /// flotilla's `rolloutStrategy` for the policies (`--rollout progressive`).
    pub rollout: Option<serde_json::Value>,
}

/// The phases, in order; only setup errors end it early, a failed phase is reported. Returns
/// the control plane's memory before them, and what each measured.
async fn measure(
    fleet: &mut Fleet,
    run: &str,
    s: &Scale,
    progress: &Progress,
) -> Result<report::Measured> {
    wait_for_apis(fleet, progress).await?;
    let idle = fleet.hub.rss()?;
    let (lat_ns, scale_ns) = (format!("{run}-latency"), format!("{run}-scale"));
    let latency = latency::run(fleet, run, &lat_ns, s, progress).await;
    let memory = memory::run(
        fleet,
        run,
        &scale_ns,
        s.deployments,
        s.rollout.as_ref(),
        progress,
    )
    .await;
    let cleanup = cleanup::run(fleet, &[lat_ns, scale_ns], memory::SETTLE, progress).await;
    let text = |r: anyhow::Error| format!("{r:#}");
    Ok(report::Measured {
        idle,
        latency: latency.map_err(text),
        memory: memory.map_err(text),
        cleanup: cleanup.map_err(text),
    })
}

/// Wait until every member has reported that it serves Deployments: before that the scheduler
/// cannot place them there, and the first templates would wait for the next report.
async fn wait_for_apis(fleet: &mut Fleet, progress: &Progress) -> Result<()> {
    let serves = |c: &Cluster| {
        c.status.as_ref().is_some_and(|s| {
            s.api_enablements.iter().any(|e| {
                e.group_version == "apps/v1" && e.resources.iter().any(|r| r.kind == "Deployment")
            })
        })
    };
    fleet
        .wait_clusters(
            "serving apps/v1 Deployments",
            serves,
            APIS_TIMEOUT,
            progress,
        )
        .await
}

/// How many Deployments namespace `ns` of a member holds, cheaply: one list of one item, and
/// the count of the rest the server reports with it.
async fn count_in(member: &Client, ns: &str) -> Result<usize> {
    let api: Api<Deployment> = Api::namespaced(member.clone(), ns);
    let page = api.list_metadata(&ListParams::default().limit(1)).await?;
    let rest = page.metadata.remaining_item_count.unwrap_or(0);
    if rest == 0
        && page
            .metadata
            .continue_
            .as_deref()
            .is_some_and(|c| !c.is_empty())
    {
        // A server that pages without counting: count every item.
        return Ok(api.list_metadata(&ListParams::default()).await?.items.len());
    }
    Ok(page.items.len() + usize::try_from(rest).unwrap_or(0))
}

/// An error naming what went wrong in `plane`'s run, if anything did, after the report is out.
/// A phase that could not be measured is an error for either plane; late or missing changes
/// and bindings only for flotilla's own (`ours`): for a peer they are what was measured.
fn check(plane: &str, s: &report::Measured, ours: bool) -> Result<()> {
    let mut problems = Vec::new();
    for (phase, failed) in [
        ("latency", s.latency.as_ref().err()),
        ("scale", s.memory.as_ref().err()),
        ("cleanup", s.cleanup.as_ref().err()),
    ] {
        if let Some(e) = failed {
            problems.push(format!("the {phase} phase failed: {e}"));
        }
    }
    if ours {
        if let Ok(l) = &s.latency {
            let errors = l.create_errors.0 + l.write_errors.0;
            if errors > 0 || l.not_seen.0 > 0 || l.not_running.0 > 0 {
                problems.push(format!(
                    "in the latency phase {errors} writes failed, {} templates did not run in every \
                     member and {} changes were not seen in every member within {} s",
                    l.not_running.0,
                    l.not_seen.0,
                    latency::TIMEOUT.as_secs()
                ));
            }
        }
        if let Ok(m) = &s.memory {
            if m.not_applied.0 > 0 {
                problems.push(format!(
                    "{} bindings were not FullyApplied in the scale phase",
                    m.not_applied.0
                ));
            }
        }
        if let Ok(c) = &s.cleanup {
            let left: usize = c.left.iter().map(|(_, n)| n).sum();
            if c.took.is_none() || c.works_left > 0 || left > 0 {
                problems.push(format!(
                    "cleanup left {} namespaces and {} Works on the hub and {left} Deployments in \
                     the members",
                    c.hub_left.len(),
                    c.works_left
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        bail!("{plane}: {}; see the report above", problems.join("; "))
    }
}
