//! The "Propagation" report section: when, on what machine and at which commit; the latency
//! table (changes, per member, and the first creates) against issue 6's target; the hub's memory
//! and throughput at N Deployments; and what cleanup took and left. Printed, and appended to
//! BENCHMARKS.md.

use super::cleanup::Cleanup;
use super::latency::{Latency, TIMEOUT};
use super::memory::{Memory, CONCURRENCY, SETTLE};
use crate::figures::{mib, thousands};
use crate::procs::Rss;
use crate::report::{one_line, phase, summary_cells, Head};
use crate::stats::{ms, Summary};

/// Issue 6's target for a template change to reach every member.
pub const TARGET_MS: u128 = 1_000;
/// Karmada's published figure, printed as the reference.
pub const KARMADA: &str = "Karmada's published figure is p99 1.3 s from a template change to \
applied in the members at 100 clusters";

/// Everything the section says.
pub struct Section {
    /// When, where, at which commit, on which members.
    pub head: Head,
    /// What flotilla's run measured.
    pub flotilla: Measured,
    /// The peer's run (`--peer`): what its control plane is and what it measured, or why it
    /// could not be measured.
    pub peer: Option<Result<(String, Measured), String>>,
}

/// What one control plane's run measured.
pub struct Measured {
    /// The control plane's memory right after the members joined.
    pub idle: Rss,
    /// The latency phase, or why it failed.
    pub latency: Result<Latency, String>,
    /// The scale phase, or why it failed.
    pub memory: Result<Memory, String>,
    /// Cleanup, or why it failed.
    pub cleanup: Result<Cleanup, String>,
}

/// The section as Markdown.
pub fn render(s: &Section) -> String {
    let mut out = s.head.render("Propagation (`flotilla bench propagation`)");
    let f = &s.flotilla;
    out += "### End-to-end latency: template change on the hub → in all 3 members\n\n";
    out += &phase(&f.latency, latency);
    out += "\n### Hub memory and throughput\n\n";
    out += &phase(&f.memory, |m| memory(m, f.idle, f.cleanup.as_ref().ok()));
    out += "\n### Cleanup\n\n";
    out += &phase(&f.cleanup, cleanup);
    if let Some(peer) = &s.peer {
        out += "\n### Side by side with Karmada (same members, same run)\n\n";
        out += &match peer {
            Ok((what, k)) => side_by_side(f, what, k),
            Err(e) => format!("Karmada could not be measured: {}\n", one_line(e)),
        };
    }
    out
}

/// One table of the figures both planes measured, then what failed on the peer's side.
fn side_by_side(f: &Measured, what: &str, k: &Measured) -> String {
    let mut out = format!(
        "The same phases on the same 3 members, one control plane after the other, with the \
         members joined to Karmada in Push mode (`karmadactl join`) and the same \
         PropagationPolicy (`policy.karmada.io/v1alpha1`, the same fields). Control-plane \
         memory is the sum of VmRSS over its processes ({what}; flotilla: the one `flotilla \
         serve` process).\n\n\
         | figure | flotilla | Karmada |\n|---|---|---|\n"
    );
    let both = |label: &str, cell: &dyn Fn(&Measured) -> Option<String>| {
        let show = |m: &Measured| cell(m).unwrap_or_else(|| "–".into());
        format!("| {label} | {} | {} |\n", show(f), show(k))
    };
    let lat = |pick: fn(&Latency) -> Option<Summary>| {
        move |m: &Measured| {
            let s = pick(m.latency.as_ref().ok()?)?;
            Some(format!("p50 {} / p99 {}", ms(s.p50), ms(s.p99)))
        }
    };
    out += &both(
        "template change → in all 3 members",
        &lat(|l: &Latency| l.all),
    );
    out += &both(
        "changes not in all 3 members within 30 s",
        &|m: &Measured| {
            let l = m.latency.as_ref().ok()?;
            Some(format!(
                "{} of {}",
                l.not_seen.0,
                thousands(l.changes as u64)
            ))
        },
    );
    out += &both(
        "create → Deployment in all 3 members",
        &lat(|l: &Latency| l.create_in_members),
    );
    out += &both("propagated (scale phase)", &|m: &Measured| {
        let mem = m.memory.as_ref().ok()?;
        Some(format!(
            "{} Deployments in {:.1} s: {:.0}/s ({:.0} member objects/s)",
            thousands((mem.deployments - mem.not_applied.0) as u64),
            mem.took.as_secs_f64(),
            mem.throughput(),
            3.0 * mem.throughput()
        ))
    });
    out += &both("memory, idle with 3 members", &|m: &Measured| {
        Some(mib(m.idle.now))
    });
    out += &both("memory, all bindings FullyApplied", &|m: &Measured| {
        Some(mib(m.memory.as_ref().ok()?.after.now))
    });
    out += &both("memory, peak", &|m: &Measured| {
        let mem = m.memory.as_ref().ok()?;
        Some(mib(mem.after.peak))
    });
    out += &both(
        "cleanup: namespaces deleted → members empty",
        &|m: &Measured| {
            let t = m.cleanup.as_ref().ok()?.took?;
            Some(format!("{:.1} s", t.as_secs_f64()))
        },
    );
    for (phase, failed) in [
        ("latency", k.latency.as_ref().err()),
        ("scale", k.memory.as_ref().err()),
        ("cleanup", k.cleanup.as_ref().err()),
    ] {
        if let Some(e) = failed {
            out += &format!("\nKarmada's {phase} phase failed: {}\n", one_line(e));
        }
    }
    out
}

fn latency(l: &Latency) -> String {
    let strategy = match &l.rollout {
        Some(r) => format!(
            " with `rolloutStrategy: {r}` (the progressive machinery: revisions, health gates)"
        ),
        None => String::new(),
    };
    let mut out = format!(
        "A PropagationPolicy{strategy} sends every Deployment of a namespace to member-1, member-2 and \
         member-3 (`Duplicated`). {} Deployments of 1 replica are created first; then {} \
         changes are offered at {}/s (open loop; sent at {:.1}/s), each raising a sequence \
         annotation on one Deployment's metadata (round-robin over them; no pod rollout in the \
         members). Clocks start when the hub answers the write and stop when a watch on the \
         member shows that number or a later one.\n\n\
         | hub write returned → | count | p50 | p95 | p99 | max |\n\
         |---|---|---|---|---|---|\n",
        thousands(l.templates as u64),
        thousands(l.changes as u64),
        l.rate,
        l.sent_rate
    );
    let row = |what: &str, s: Option<Summary>| format!("| {what} | {} |\n", summary_cells(s));
    out += &row("change in all 3 members", l.all);
    for (name, mode, s) in &l.per_member {
        out += &row(&format!("change in {name} ({})", mode.name()), *s);
    }
    out += &row("create: Deployment in all 3 members", l.create_in_members);
    out += &row(
        "create: running (1/1 ready) in all 3 members",
        l.create_running,
    );
    let met = match l.all {
        Some(s) if s.p99.as_millis() <= TARGET_MS => "met",
        Some(_) => "**not met**",
        None => "not measured",
    };
    out += &format!(
        "\nTarget (issue 6): p99 ≤ {} s for a change in all members — {met}. Reference: \
         {KARMADA}.\n",
        TARGET_MS / 1000
    );
    let (errors, first) = &l.write_errors;
    let (not_seen, why) = &l.not_seen;
    let (create_errors, first_create) = &l.create_errors;
    let (not_running, why_not_running) = &l.not_running;
    out += &format!(
        "\nChanges not seen in all 3 members within {} s: {not_seen}{}. Write errors: \
         {errors}{}. Templates not running in all 3 members: {not_running}{}; create errors: \
         {create_errors}{}.\n",
        TIMEOUT.as_secs(),
        examples(why),
        first_error(first),
        examples(why_not_running),
        first_error(first_create),
    );
    out
}

fn memory(m: &Memory, idle: Rss, cleanup: Option<&Cleanup>) -> String {
    let n = thousands(m.deployments as u64);
    let mut out = format!(
        "{n} Deployments of 0 replicas (the members could not run 30,000 pods; the hub's work \
         per Deployment does not depend on it) in a namespace whose PropagationPolicy sends \
         them to the 3 members: {n} bindings, {} Works, {} Deployments in the members. The \
         hub's memory is read from /proc/PID/status, {} s after the last binding is seen \
         FullyApplied.\n\n\
         | figure | value |\n|---|---|\n",
        thousands(3 * m.deployments as u64),
        thousands(3 * m.deployments as u64),
        SETTLE.as_secs()
    );
    let rss = |r: Rss| format!("{} (peak so far {})", mib(r.now), mib(r.peak));
    out += &format!(
        "| hub VmRSS, idle after the members joined | {} |\n",
        rss(idle)
    );
    out += &format!("| hub VmRSS before the creates | {} |\n", rss(m.before));
    out += &format!(
        "| hub VmRSS, all {n} bindings FullyApplied | {} |\n",
        rss(m.after)
    );
    if let Some(r) = cleanup.and_then(|c| c.hub) {
        out += &format!("| hub VmRSS after cleanup | {} |\n", rss(r));
    }
    out += &format!(
        "| creates ({CONCURRENCY} concurrent) | {n} in {:.1} s ({:.0}/s) |\n",
        m.creates_took.as_secs_f64(),
        m.deployments as f64 / m.creates_took.as_secs_f64().max(1e-3)
    );
    out += &format!(
        "| propagated: first create → last binding FullyApplied | {:.1} s, {:.0} \
         Deployments/s ({:.0} member objects/s) |\n",
        m.took.as_secs_f64(),
        m.throughput(),
        3.0 * m.throughput()
    );
    out += &format!(
        "| bindings not FullyApplied | {}{} |\n",
        m.not_applied.0,
        examples(&m.not_applied.1).replace('|', "\\|")
    );
    let members: Vec<String> = m
        .members
        .iter()
        .map(|(name, count, ready)| {
            format!(
                "{name}: {} Deployments, {}",
                thousands(*count as u64),
                if *ready { "Ready" } else { "**not Ready**" }
            )
        })
        .collect();
    out += &format!("| members afterwards | {} |\n", members.join("; "));
    out
}

fn cleanup(c: &Cleanup) -> String {
    let left: Vec<String> = c.left.iter().map(|(m, n)| format!("{m} {n}")).collect();
    let gone = match c.took {
        Some(t) => format!(
            "Deleting the namespaces on the hub removed them, and the {} copies in the members, \
             in {:.1} s.",
            thousands(c.copies as u64),
            t.as_secs_f64()
        ),
        None => format!(
            "The benchmark stopped waiting with {} namespaces still on the hub ({}).",
            c.hub_left.len(),
            c.hub_left.join(", ")
        ),
    };
    format!(
        "{gone} Works of the run left on the hub: {}. Deployments of the run left in the \
         members: {}.\n",
        c.works_left,
        left.join(", ")
    )
}

fn examples(why: &[String]) -> String {
    if why.is_empty() {
        String::new()
    } else {
        format!(" (e.g. {})", one_line(&why.join("; ")))
    }
}

fn first_error(first: &Option<String>) -> String {
    first
        .as_ref()
        .map(|e| format!(" (first: {})", one_line(e)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
