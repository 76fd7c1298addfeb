//! The scale benchmark's section of BENCHMARKS.md: one row per figure with issue 15's target.

mod load;

use std::time::Duration;

use anyhow::{bail, Result};

use super::{Loaded, Plan};
use crate::procs::Rss;
use crate::report::{yes, Head};

/// The targets for 1,000 simulated members.
pub const READY_WITHIN: Duration = Duration::from_secs(60);
/// The simulator's resident memory.
pub const SIM_RSS: u64 = 2_000_000_000;
/// The idle hub's resident memory.
pub const HUB_RSS: u64 = 300_000_000;
/// The idle hub's CPU, in cores.
pub const HUB_CPU: f64 = 0.10;

/// What the idle fleet costs.
#[derive(Clone, Debug)]
pub struct Idle {
    /// From the simulator's start to every cluster Ready on the hub.
    pub ready_after: Duration,
    /// Clusters still Ready after the window.
    pub still_ready: usize,
    /// The hub's CPU over the window, in cores.
    pub hub_cpu: f64,
    /// The simulator's CPU over the window, in cores.
    pub sim_cpu: f64,
    /// The hub's memory after the window.
    pub hub_rss: Rss,
    /// The simulator's memory after the window.
    pub sim_rss: Rss,
    /// Files the hub has open.
    pub hub_fds: Option<usize>,
}

fn mb(bytes: u64) -> String {
    format!("{} MB", crate::figures::thousands(bytes / 1_000_000))
}

fn percent(cores: f64) -> String {
    format!("{:.0}% of one core", cores * 100.0)
}

/// Works applied per second in the load phase.
pub const WORKS_PER_SECOND: f64 = 2_000.0;
/// The hub's memory with 10,000 Deployments over 1,000 clusters.
pub const HUB_RSS_LOADED: u64 = 1_500_000_000;

/// The change latency target at `clusters`: p99 ≤ 500 ms at 100 clusters, ≤ 1 s at 1,000.
pub fn change_p99(clusters: u32) -> Duration {
    if clusters <= 100 {
        Duration::from_millis(500)
    } else {
        Duration::from_secs(1)
    }
}

/// The section.
pub fn render(head: &Head, plan: &Plan, idle: &Idle, loaded: Option<&Loaded>) -> String {
    let mut s = head.render(&format!(
        "scale: {} simulated member clusters (flotilla bench scale)",
        plan.clusters
    ));
    s += &format!(
        "The hub (`flotilla serve`, SQLite, controllers and push workers in the process) and \
         `flotilla sim --count {}` start on this machine; the simulator's clusters join in {} \
         mode. Ready is read on the hub every second. Idle figures: after {} s of settling, CPU \
         from /proc over {} s, then memory. The targets are issue 15's, set for 1,000 clusters.\n\n",
        plan.clusters,
        plan.mode.sync_mode(),
        plan.settle.as_secs(),
        plan.window.as_secs()
    );
    s += "| figure | value | target | met |\n|---|---|---|---|\n";
    let rows: [Row; 7] = [
        (
            "all clusters Ready on the hub, from the simulator's start",
            format!("{:.1} s", idle.ready_after.as_secs_f64()),
            format!("≤ {} s", READY_WITHIN.as_secs()),
            Some(idle.ready_after <= READY_WITHIN),
        ),
        (
            "clusters still Ready after the idle window",
            format!("{} of {}", idle.still_ready, plan.clusters),
            "all".into(),
            Some(idle.still_ready >= plan.clusters as usize),
        ),
        (
            "hub CPU, idle",
            percent(idle.hub_cpu),
            format!("≤ {}", percent(HUB_CPU)),
            Some(idle.hub_cpu <= HUB_CPU),
        ),
        (
            "hub resident memory, idle (peak)",
            format!("{} ({})", mb(idle.hub_rss.now), mb(idle.hub_rss.peak)),
            format!("≤ {}", mb(HUB_RSS)),
            Some(idle.hub_rss.now <= HUB_RSS),
        ),
        (
            "hub open files",
            idle.hub_fds.map_or("?".into(), |n| n.to_string()),
            String::new(),
            None,
        ),
        (
            "simulator resident memory (peak)",
            format!("{} ({})", mb(idle.sim_rss.now), mb(idle.sim_rss.peak)),
            format!("≤ {}", mb(SIM_RSS)),
            Some(idle.sim_rss.peak <= SIM_RSS),
        ),
        (
            "simulator CPU, idle",
            percent(idle.sim_cpu),
            String::new(),
            None,
        ),
    ];
    for row in rows {
        s += &table_row(row);
    }
    if let Some(l) = loaded {
        s += &load::render(plan, l);
    }
    s
}

/// A figure, its value, its target and whether it is met.
pub type Row = (&'static str, String, String, Option<bool>);

/// One row of the table.
pub fn table_row((figure, value, target, met): Row) -> String {
    let met = met.map_or("", yes);
    format!("| {figure} | {value} | {target} | {met} |\n")
}

/// A run whose clusters did not stay Ready did not measure an idle fleet; a phase that failed,
/// a binding not applied, a change not seen, a workload not moved or a Work left is an error.
pub fn check(idle: &Idle, loaded: Option<&Loaded>, plan: &Plan) -> Result<()> {
    if idle.still_ready < plan.clusters as usize {
        bail!(
            "{} of the {} clusters were no longer Ready after the idle window",
            plan.clusters as usize - idle.still_ready,
            plan.clusters
        );
    }
    match loaded {
        Some(l) => load::check(l),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests;
