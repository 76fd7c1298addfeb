//! The "Work delivery" report section: when, on what machine and at which commit; the latency
//! table (all Works, and split by pull and push); the agent's memory before, at M manifests and
//! after cleanup; and what cleanup left behind. Printed, and appended to BENCHMARKS.md with the
//! helpers of `bench api`'s report.

use super::cleanup::Cleanup;
use super::latency::{Latency, Split, SLOW};
use super::memory::Memory;
use super::objects::DATA_BYTES;
use crate::figures::{mib, thousands};
use crate::procs::Rss;
use crate::report::{one_line, phase, summary_cells, Head};

/// Karmada's published figure for the same path, printed as the reference.
pub const KARMADA: &str = "Karmada publishes p99 ≈ 1.3 s from template to applied at 100 \
clusters; the issue sets no numeric target for this";

/// Everything the section says.
pub struct Section {
    /// When, where, at which commit, on which members.
    pub head: Head,
    /// The latency phase, or why it failed.
    pub latency: Result<Latency, String>,
    /// The agent's memory right after joining.
    pub idle: Option<Rss>,
    /// The memory phase, or why it failed.
    pub memory: Result<Memory, String>,
    /// Cleanup, or why it failed.
    pub cleanup: Result<Cleanup, String>,
}

/// The section as Markdown.
pub fn render(s: &Section) -> String {
    let mut out = s.head.render("Work delivery (`flotilla bench work`)");
    out += "### Latency: Work created on the hub → Applied\n\n";
    out += &phase(&s.latency, latency);
    out += "\n### Agent memory\n\n";
    out += &phase(&s.memory, |m| memory(m, s.idle, s.cleanup.as_ref().ok()));
    out += "\n### Cleanup\n\n";
    out += &phase(&s.cleanup, cleanup);
    out
}

fn latency(l: &Latency) -> String {
    let per_member: Vec<String> = l.per_member.iter().map(|n| thousands(*n as u64)).collect();
    let mut out = format!(
        "{} Works of one {DATA_BYTES}-byte ConfigMap each, offered at {}/s (open loop; sent at \
         {:.1}/s), round-robin over the members ({}). Clocks start when the create request \
         returns and stop when a watch event is received: the Work's `Applied=True` from the \
         hub, or the ConfigMap from the member.\n\n\
         | create returned → | Works | p50 | p95 | p99 | max |\n|---|---|---|---|---|---|\n",
        thousands(l.works as u64),
        l.rate,
        l.sent_rate,
        per_member.join(" / ")
    );
    let rows: [(&str, &Split); 3] = [
        ("all", &l.all),
        ("pull members", &l.pull),
        ("push member", &l.push),
    ];
    for (what, which) in [
        ("Applied=True on the hub", true),
        ("ConfigMap in the member", false),
    ] {
        for (group, split) in rows {
            let s = if which {
                split.applied
            } else {
                split.in_member
            };
            out += &format!("| {what}, {group} | {} |\n", summary_cells(s));
        }
    }
    out += &match l.slow {
        None => format!("\nNo Work took longer than {} ms.\n", SLOW.as_millis()),
        Some(s) => format!(
            "\n{} Works took longer than {} ms; they were created between {:.1} s and {:.1} s \
             into the phase.\n",
            thousands(s.count as u64),
            SLOW.as_millis(),
            s.from.as_secs_f64(),
            s.to.as_secs_f64()
        ),
    };
    out += &format!("\nReference: {KARMADA}.\n");
    let (errors, first) = &l.create_errors;
    let (missing, why) = &l.not_applied;
    out += &format!(
        "\nCreate errors: {errors}{}. Works not seen Applied: {missing}{}.\n",
        first
            .as_ref()
            .map(|e| format!(" (first: {})", one_line(e)))
            .unwrap_or_default(),
        if why.is_empty() {
            String::new()
        } else {
            format!(" (e.g. {})", one_line(&why.join("; ")))
        }
    );
    out
}

fn memory(m: &Memory, idle: Option<Rss>, cleanup: Option<&Cleanup>) -> String {
    let mut out = format!(
        "The pull agent of {} (its own process): its Works grow to {} manifests — {} Works of up \
         to 100 ConfigMaps added — and its memory is read from /proc/PID/status 5 s after the \
         last Work is seen Applied.\n\n\
         | agent | manifests | VmRSS | VmHWM (peak so far) |\n|---|---|---|---|\n",
        m.member,
        thousands(m.manifests as u64),
        thousands(m.works as u64),
    );
    let row = |what: &str, manifests: usize, r: Rss| {
        format!(
            "| {what} | {} | {} | {} |\n",
            thousands(manifests as u64),
            mib(r.now),
            mib(r.peak)
        )
    };
    if let Some(r) = idle {
        out += &row("idle, right after joining", 0, r);
    }
    out += &row("before the phase", m.before_manifests, m.before);
    out += &row("all Applied", m.manifests, m.after);
    if let Some(r) = cleanup.and_then(|c| c.agent) {
        out += &row("after every Work was deleted and pruned", 0, r);
    }
    out += &format!(
        "\nGrowth: {} per 1,000 manifests added (target: memory that stays bounded). {} Works \
         Applied in {:.1} s; not Applied: {}{}. Hub VmRSS at the end of the phase: {}.\n",
        m.per_thousand()
            .map(|b| format!("{:.2} MiB", b / 1024.0 / 1024.0))
            .unwrap_or_else(|| "–".into()),
        thousands(m.works as u64),
        m.took.as_secs_f64(),
        m.not_applied.0,
        if m.not_applied.1.is_empty() {
            String::new()
        } else {
            format!(" (e.g. {})", one_line(&m.not_applied.1.join("; ")))
        },
        mib(m.hub.now)
    );
    out
}

fn cleanup(c: &Cleanup) -> String {
    let left: Vec<String> = c.left.iter().map(|(m, n)| format!("{m} {n}")).collect();
    let deleted = match c.took {
        Some(t) => format!(
            "All {} Works deleted, pruned from the members and gone from the hub in {:.1} s.",
            thousands(c.works as u64),
            t.as_secs_f64()
        ),
        None => format!(
            "{} of {} Works were still on the hub when the benchmark stopped waiting.",
            thousands(c.remaining as u64),
            thousands(c.works as u64)
        ),
    };
    format!(
        "{deleted} ConfigMaps of the run left in the members: {}.\n",
        left.join(", ")
    )
}

#[cfg(test)]
mod tests;
