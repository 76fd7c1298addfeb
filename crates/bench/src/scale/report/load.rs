//! The rows of the phases after the idle window: load, changes, failover, cleanup.

use anyhow::{bail, Result};

use super::{change_p99, mb, table_row, Row, HUB_RSS_LOADED, WORKS_PER_SECOND};
use crate::figures::thousands;
use crate::scale::{changes, Loaded, Plan};
use crate::stats;

/// The second table.
pub fn render(plan: &Plan, l: &Loaded) -> String {
    let mut s = String::from(
        "\nUnder load: the Deployments are Divided (Weighted, equal weights) over placement \
         groups of 3–10 clusters that cover the fleet, one PropagationPolicy per group; \
         Works/s is the bindings' clusters over the time from the first create to the last \
         binding FullyApplied. Changes raise an annotation of a template (open loop) and are \
         timed until a watch on every cluster of its binding shows them. Failover stops the \
         cluster in the most bindings (the simulator answers 503 for it) with the hub's grace \
         period and toleration as given below. Cleanup deletes the namespace.\n\n\
         | figure | value | target | met |\n|---|---|---|---|\n",
    );
    let mut rows: Vec<Row> = Vec::new();
    match &l.load {
        Ok(d) => {
            rows.push((
                "Deployments Divided",
                format!(
                    "{} × {} replicas, {} groups, {} Works",
                    thousands(d.deployments as u64),
                    d.replicas,
                    d.groups,
                    thousands(d.works() as u64)
                ),
                String::new(),
                None,
            ));
            rows.push((
                "bindings not FullyApplied",
                d.not_applied.0.to_string(),
                "0".into(),
                Some(d.not_applied.0 == 0),
            ));
            rows.push((
                "Works applied per second (first create → last FullyApplied)",
                format!(
                    "{:.0} ({:.1} s; creates took {:.1} s)",
                    d.works_per_second(),
                    d.took.as_secs_f64(),
                    d.creates_took.as_secs_f64()
                ),
                format!("≥ {WORKS_PER_SECOND:.0}"),
                Some(d.works_per_second() >= WORKS_PER_SECOND),
            ));
            rows.push((
                "hub CPU per Work applied (load phase)",
                format!(
                    "{:.1} ms ({:.0} s of CPU)",
                    d.hub_cpu_per_work_ms(),
                    d.hub_cpu
                ),
                String::new(),
                None,
            ));
            rows.push((
                "hub resident memory, loaded (peak)",
                format!("{} ({})", mb(d.hub.now), mb(d.hub.peak)),
                format!("≤ {}", mb(HUB_RSS_LOADED)),
                Some(d.hub.now <= HUB_RSS_LOADED),
            ));
        }
        Err(e) => rows.push(("load phase", format!("failed: {e}"), String::new(), None)),
    }
    rows.extend(change_rows(plan, &l.changes, MAIN));
    if let Some(light) = &l.light {
        rows.extend(change_rows(plan, light, LIGHT));
    }
    match &l.failover {
        Ok(f) => {
            let budget = plan.failover_budget();
            rows.push((
                "failover: one cluster stopped → its bindings applied elsewhere",
                match f.took {
                    Some(t) => format!(
                        "{:.1} s ({}, {} bindings; grace {} s + toleration {} s)",
                        t.as_secs_f64(),
                        f.cluster,
                        f.bindings,
                        plan.timings.0.as_secs(),
                        plan.timings.1.as_secs()
                    ),
                    None => format!("{} of {} not moved", f.not_moved.0, f.bindings),
                },
                format!("≤ {} s", budget.as_secs()),
                Some(f.took.is_some_and(|t| t <= budget)),
            ));
        }
        Err(e) => rows.push((
            "failover phase",
            format!("failed: {e}"),
            String::new(),
            None,
        )),
    }
    match &l.cleanup {
        Ok(c) => {
            rows.push((
                "cleanup: namespace deleted → its Works gone",
                match c.took {
                    Some(t) => format!("{:.1} s for {} Works", t.as_secs_f64(), c.works),
                    None => format!("{} of {} Works left", c.works_left, c.works),
                },
                String::new(),
                Some(c.took.is_some()),
            ));
            rows.push((
                "hub resident memory after cleanup (peak)",
                format!("{} ({})", mb(c.hub.now), mb(c.hub.peak)),
                String::new(),
                None,
            ));
        }
        Err(e) => rows.push(("cleanup phase", format!("failed: {e}"), String::new(), None)),
    }
    for row in rows {
        s += &table_row(row);
    }
    s
}

/// The figure names of one change phase's rows: its latency, its misses, its failure.
type ChangeFigures = (&'static str, &'static str, &'static str);

const MAIN: ChangeFigures = (
    "template change → applied in all its clusters, p50 / p99 / max",
    "changes failed or not seen everywhere within 30 s",
    "change phase",
);
const LIGHT: ChangeFigures = (
    "… the same at a light load (other templates, changed before), p50 / p99 / max",
    "… of those, changes failed or not seen everywhere within 30 s",
    "light change phase",
);

/// The rows of one change phase.
fn change_rows(
    plan: &Plan,
    c: &Result<changes::Changes, String>,
    (latency, misses, phase): ChangeFigures,
) -> Vec<Row> {
    let c = match c {
        Ok(c) => c,
        Err(e) => return vec![(phase, format!("failed: {e}"), String::new(), None)],
    };
    let target = change_p99(plan.clusters);
    vec![
        (
            latency,
            c.all.as_ref().map_or("–".into(), |s| {
                format!(
                    "{} / {} / {} ({} changes at {}/s to {} templates in {} clusters; \
                     the hub's CPU {:.1} ms per change)",
                    stats::ms(s.p50),
                    stats::ms(s.p99),
                    stats::ms(s.max),
                    c.changes,
                    c.rate,
                    c.templates,
                    c.clusters,
                    c.hub_cpu_per_change_ms()
                )
            }),
            format!("p99 ≤ {}", stats::ms(target)),
            Some(c.all.as_ref().is_some_and(|s| s.p99 <= target)),
        ),
        (
            misses,
            format!("{} + {}", c.write_errors.0, c.not_seen),
            "0".into(),
            Some(c.write_errors.0 + c.not_seen == 0),
        ),
    ]
}

/// An error naming what did not complete.
pub fn check(l: &Loaded) -> Result<()> {
    let mut problems = Vec::new();
    let light = l.light.as_ref();
    for (phase, e) in [
        ("load", l.load.as_ref().err()),
        ("light change", light.and_then(|c| c.as_ref().err())),
        ("change", l.changes.as_ref().err()),
        ("failover", l.failover.as_ref().err()),
        ("cleanup", l.cleanup.as_ref().err()),
    ] {
        if let Some(e) = e {
            problems.push(format!("the {phase} phase failed: {e}"));
        }
    }
    if let Ok(d) = &l.load {
        if d.not_applied.0 > 0 {
            problems.push(format!(
                "{} bindings were not FullyApplied ({})",
                d.not_applied.0,
                d.not_applied.1.join("; ")
            ));
        }
    }
    let phases = [light.and_then(|c| c.as_ref().ok()), l.changes.as_ref().ok()];
    for c in phases.into_iter().flatten() {
        if c.write_errors.0 + c.not_seen > 0 {
            problems.push(format!(
                "{} changes at {}/s failed and {} were not seen in all their clusters within {} s{}",
                c.write_errors.0,
                c.rate,
                c.not_seen,
                changes::TIMEOUT.as_secs(),
                c.write_errors
                    .1
                    .as_ref()
                    .map_or(String::new(), |e| format!(" (first error: {e})"))
            ));
        }
    }
    if let Ok(f) = &l.failover {
        if f.took.is_none() {
            problems.push(format!(
                "{} of the {} bindings on {} did not move ({})",
                f.not_moved.0,
                f.bindings,
                f.cluster,
                f.not_moved.1.join("; ")
            ));
        }
    }
    if let Ok(c) = &l.cleanup {
        if c.took.is_none() {
            problems.push(format!("cleanup left {} Works", c.works_left));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        bail!("{}; see the report above", problems.join("; "))
    }
}
