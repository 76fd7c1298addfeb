//! `flotilla bench interpret`: how fast ResourceInterpreter rules run, in process on one
//! thread. The interpreters are the ones shipped in `examples/interpreters/` (Argo Rollouts,
//! OpenKruise CloneSet, CronJob), each evaluated over an object shaped like what a member
//! reports: every rule the interpreter has (replicas with requests, health with its reason,
//! each status field collected from three members and combined, dependencies), after a
//! warm-up. Counted as rules evaluated per second (one rule: one CEL expression run, or one
//! status field read from three members and combined), next to the target.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use flotilla_apis::config::v1alpha1::ResourceInterpreter;
use flotilla_interpreter::Interpreter;
use serde_json::{json, Value};

use super::figures::thousands;
use super::progress::Progress;

/// Rules per second on one core (issue 16).
const TARGET: f64 = 50_000.0;

const SHIPPED: [(&str, &str); 3] = [
    (
        "Argo Rollouts Rollout",
        include_str!("../../../examples/interpreters/argo-rollout.yaml"),
    ),
    (
        "OpenKruise CloneSet",
        include_str!("../../../examples/interpreters/kruise-cloneset.yaml"),
    ),
    (
        "batch/v1 CronJob",
        include_str!("../../../examples/interpreters/batch-cronjob.yaml"),
    ),
];

/// Options of `flotilla bench interpret`.
#[derive(Args, Debug)]
pub struct InterpretArgs {
    /// How long each interpreter is timed [default: 3 s; --quick: 0.3 s].
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<f64>,
    /// A short run that proves the tool works; its figures are appended only with --output.
    #[arg(long)]
    quick: bool,
    #[command(flatten)]
    out: super::report::OutputArgs,
}

/// One interpreter's figures.
struct Row {
    name: &'static str,
    /// Rules per pass over its object.
    rules: usize,
    passes: u64,
    wall: Duration,
}

impl Row {
    fn rate(&self) -> f64 {
        (self.passes as f64 * self.rules as f64) / self.wall.as_secs_f64().max(1e-9)
    }
}

/// Run the benchmark (blocking: all computation on this thread).
pub fn run(a: InterpretArgs) -> Result<()> {
    let seconds = a.seconds.unwrap_or(if a.quick { 0.3 } else { 3.0 });
    if !seconds.is_finite() || seconds <= 0.0 {
        bail!("--seconds must be more than 0");
    }
    super::report::warn_if_debug(a.quick);
    let output = a.out.path(a.quick);
    let when = chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string();
    let load_before = super::report::load_average();
    let progress = Progress::new("interpret");
    let mut rows = Vec::new();
    for (name, yaml) in SHIPPED {
        let ri: ResourceInterpreter = serde_yaml::from_str(yaml)
            .with_context(|| format!("the shipped {name} interpreter"))?;
        let interpreter = Interpreter::compile(&ri.spec).map_err(|e| {
            anyhow::anyhow!("the shipped {name} interpreter does not compile: {e:?}")
        })?;
        let object = sample(&ri.spec.target.kind);
        let rules =
            pass(&interpreter, &object).with_context(|| format!("{name}: a rule failed"))?;
        let phase = progress.phase(&format!("{name}: {rules} rules per pass"), 1);
        // Warm-up: the compiled programs' caches, the allocator.
        let warm = Instant::now();
        while warm.elapsed() < Duration::from_secs_f64(seconds / 10.0) {
            std::hint::black_box(pass(&interpreter, &object)?);
        }
        let started = Instant::now();
        let mut passes = 0u64;
        while started.elapsed() < Duration::from_secs_f64(seconds) {
            std::hint::black_box(pass(&interpreter, &object)?);
            passes += 1;
        }
        let row = Row {
            name,
            rules,
            passes,
            wall: started.elapsed(),
        };
        phase.done(&format!("{:.0} rules/s", row.rate()));
        rows.push(row);
    }
    let total_rules: f64 = rows.iter().map(|r| r.passes as f64 * r.rules as f64).sum();
    let total_wall: f64 = rows.iter().map(|r| r.wall.as_secs_f64()).sum();
    let overall = total_rules / total_wall.max(1e-9);
    let mut text = format!(
        "## {when} — ResourceInterpreter rules (`flotilla bench interpret`) — commit {}\n\n\
         - Machine: {}\n- Run: {} scale, {} build of flotilla {}, in process on one thread \
         ({seconds} s per interpreter after a tenth as warm-up); 1-minute load average \
         {load_before} before the run, {} after it\n\
         - Input: the interpreters of `examples/interpreters/`, each over a member-shaped object \
         of its kind; one pass runs every rule it has (replicas and requests, health and its \
         reason, each status field collected from three members and combined, dependencies)\n\n\
         | interpreter | rules per pass | rules/s | target |\n|---|---|---|---|\n",
        super::report::commit(),
        super::report::machine(),
        if a.quick { "quick" } else { "full" },
        super::report::build(),
        env!("CARGO_PKG_VERSION"),
        super::report::load_average(),
    );
    for r in &rows {
        text += &format!(
            "| {} | {} | {} | |\n",
            r.name,
            r.rules,
            thousands(r.rate() as u64)
        );
    }
    text += &format!(
        "| all three | | {} | ≥ {} on one core ({}) |\n\n\
         Karmada's Lua interpreter is not measured here (its customizations run inside \
         karmada-controller-manager).\n",
        thousands(overall as u64),
        thousands(TARGET as u64),
        if overall >= TARGET { "met" } else { "NOT met" }
    );
    super::report::publish(&text, output.as_deref())?;
    Ok(())
}

/// Every rule of `i` over `object` once; how many rules ran.
fn pass(i: &Interpreter, object: &Value) -> Result<usize> {
    let mut rules = 0;
    if let Some(r) = i.replicas(object) {
        let r = r?;
        rules += 1 + usize::from(!r.requests.is_empty());
    }
    if let Some(h) = i.health(object) {
        let h = h?;
        rules += 1 + usize::from(!h.healthy);
    }
    if i.collects_status() {
        // Each member's copy read, then combined: one rule per status field.
        let (a, b, c) = (i.collect(object)?, i.collect(object)?, i.collect(object)?);
        std::hint::black_box(i.aggregate(&[("m-1", &a), ("m-2", &b), ("m-3", &c)])?);
        rules += i.status_fields();
    }
    if let Some(d) = i.dependencies(object) {
        d?;
        rules += 1;
    }
    Ok(rules)
}

/// A member's copy of `kind`, mid-rollout (so health rules take their reason branch too).
fn sample(kind: &str) -> Value {
    let pod = json!({"containers": [{"name": "app", "image": "nginx:1.27",
            "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}}],
        "volumes": [{"name": "conf", "configMap": {"name": "app-conf"}},
                    {"name": "tls", "secret": {"secretName": "app-tls"}},
                    {"name": "scratch", "emptyDir": {}}]});
    let conditions = json!([{"type": "Available", "status": "True"},
                            {"type": "Progressing", "status": "True", "reason": "Updating"}]);
    match kind {
        "CronJob" => json!({"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "backup", "namespace": "ops", "generation": 4},
            "spec": {"schedule": "*/5 * * * *",
                     "jobTemplate": {"spec": {"template": {"spec": pod}}}},
            "status": {"lastScheduleTime": "2026-12-01T10:05:00Z",
                       "lastSuccessfulTime": "2026-12-01T10:00:07Z",
                       "active": []}}),
        _ => json!({"apiVersion": "example/v1", "kind": kind,
            "metadata": {"name": "web", "namespace": "shop", "generation": 7},
            "spec": {"replicas": 4, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": pod}},
            "status": {"observedGeneration": 7, "phase": "Progressing",
                       "message": "more replicas need to be updated",
                       "replicas": 4, "updatedReplicas": 2, "readyReplicas": 3,
                       "availableReplicas": 3, "updatedReadyReplicas": 2,
                       "conditions": conditions}}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_interpreter_runs_all_its_rules_on_its_sample() {
        let mut counts = Vec::new();
        for (name, yaml) in SHIPPED {
            let ri: ResourceInterpreter = serde_yaml::from_str(yaml).unwrap();
            let i = Interpreter::compile(&ri.spec).unwrap();
            let rules =
                pass(&i, &sample(&ri.spec.target.kind)).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            counts.push(rules);
        }
        // Each sample is unhealthy, so health's reason runs too. Rollout: replicas and
        // requests, health and reason, 5 status fields, dependencies; CloneSet: the same with
        // 6 fields; CronJob (no replicas): health and reason, 3 fields, dependencies.
        assert_eq!(counts, [10, 11, 6]);
    }
}
