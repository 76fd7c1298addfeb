//! `flotilla rollout status|pause|resume|undo KIND/NAME -n NS`: a progressive rollout
//! (`spec.rolloutStrategy` of its policy) as its binding's `status.rollout` tells it, held and
//! resumed by the binding's annotation `rollout.flotilla.io/paused`, and undone by setting the
//! template back to the previous revision (which then rolls out the same way).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use flotilla_apis::conditions;
use flotilla_apis::work::v1alpha1::{
    ClusterResourceBinding, ResourceBinding, RolloutPhase, RolloutStatus, CONDITION_COMPLETE,
    CONDITION_FAILED, CONDITION_PROGRESSING, PAUSED_ANNOTATION,
};
use flotilla_controllers::propagation::binding::BINDING_LABEL;
use flotilla_controllers::propagation::workload;
use flotilla_controllers::propagation::works::rollout::{
    revision_content, revision_name, revision_namespace,
};
use k8s_openapi::api::apps::v1::ControllerRevision;
use kube::api::{ListParams, Patch, PatchParams};
use kube::{Api, Client};
use serde_json::{json, Value};

use super::explain::{object, Object};

/// `flotilla rollout ...`
#[derive(Args, Debug)]
pub struct RolloutArgs {
    #[command(subcommand)]
    command: RolloutCommand,
    /// The hub's admin kubeconfig (default: KUBECONFIG, then ~/.kube/config).
    #[arg(long, env = "KUBECONFIG", global = true)]
    kubeconfig: Option<PathBuf>,
    /// The object's namespace (omit for cluster-scoped objects).
    #[arg(short, long, global = true)]
    namespace: Option<String>,
}

#[derive(Subcommand, Debug)]
enum RolloutCommand {
    /// Print where the object's progressive rollout stands: the revision going out, each
    /// cluster's revision and phase, and a progress bar. Exits 1 when the rollout failed.
    Status {
        /// The object as KIND/NAME, e.g. deployment/web.
        object: String,
        /// Follow the rollout until it completes (exit 0) or fails (exit 1).
        #[arg(short, long)]
        watch: bool,
        /// With --watch: give up after this long (e.g. 5m; default: wait as long as it takes).
        #[arg(long, value_parser = super::parse_duration)]
        timeout: Option<Duration>,
    },
    /// Hold the rollout: clusters not yet on the new revision stay where they are.
    Pause {
        /// The object as KIND/NAME.
        object: String,
    },
    /// Let a paused rollout go on.
    Resume {
        /// The object as KIND/NAME.
        object: String,
    },
    /// Set the object back to its previous revision (or --to-revision), which then rolls out
    /// to the clusters as any change does.
    Undo {
        /// The object as KIND/NAME.
        object: String,
        /// The revision number to go back to (see `rollout status`); default: the newest one
        /// before the current.
        #[arg(long)]
        to_revision: Option<i64>,
    },
}

/// Runs `flotilla rollout`.
pub async fn run(args: RolloutArgs) -> Result<()> {
    let hub = super::hub_client(args.kubeconfig.as_deref()).await?;
    let ns = args.namespace.as_deref();
    match args.command {
        RolloutCommand::Status {
            object,
            watch,
            timeout,
        } => status(&hub, &object, ns, watch, timeout).await,
        RolloutCommand::Pause { object } => pause(&hub, &object, ns, true).await,
        RolloutCommand::Resume { object } => pause(&hub, &object, ns, false).await,
        RolloutCommand::Undo {
            object,
            to_revision,
        } => undo(&hub, &object, ns, to_revision).await,
    }
}

/// The object's binding: its name, its rollout status, and its annotations.
struct Binding {
    name: String,
    rollout: Option<RolloutStatus>,
    progressive: bool,
}

/// The revision the object's content now is (as the hub names it), `None` when it is gone.
async fn expected_revision(target: &Object, binding: &str) -> Result<Option<String>> {
    let Some(obj) = target
        .api
        .get_opt(&target.name)
        .await
        .context("read the object")?
    else {
        return Ok(None);
    };
    let mut v = serde_json::to_value(obj).context("the object as JSON")?;
    v["apiVersion"] = json!(target.group_version);
    v["kind"] = json!(target.resource.kind);
    Ok(Some(revision_name(binding, &revision_content(&v)).0))
}

async fn binding(hub: &Client, target: &Object, given: &str, ns: Option<&str>) -> Result<Binding> {
    try_binding(hub, target, ns).await?.with_context(|| {
        format!(
            "{given} has no binding {:?}: no propagation policy selects it (see `kubectl get propagationpolicies,clusterpropagationpolicies -A`)",
            workload::binding_name(&target.name, &target.resource.kind)
        )
    })
}

async fn try_binding(hub: &Client, target: &Object, ns: Option<&str>) -> Result<Option<Binding>> {
    let name = workload::binding_name(&target.name, &target.resource.kind);
    let found = if target.resource.namespaced {
        let ns = ns.context("give the object's namespace with -n")?;
        Api::<ResourceBinding>::namespaced(hub.clone(), ns)
            .get_opt(&name)
            .await
            .context("read the binding")?
            .map(|b| (b.spec, b.status))
    } else {
        Api::<ClusterResourceBinding>::all(hub.clone())
            .get_opt(&name)
            .await
            .context("read the cluster binding")?
            .map(|b| (b.spec.spec, b.status))
    };
    Ok(found.map(|(spec, status)| Binding {
        name,
        rollout: status.and_then(|s| s.rollout),
        progressive: spec.rollout_strategy.is_some_and(|s| s.progressive()),
    }))
}

async fn revisions(
    hub: &Client,
    ns: Option<&str>,
    binding: &str,
) -> Result<Vec<ControllerRevision>> {
    let label = workload::binding_label(ns, binding);
    let mut items = Api::<ControllerRevision>::namespaced(hub.clone(), revision_namespace(ns))
        .list(&ListParams::default().labels(&format!("{BINDING_LABEL}={label}")))
        .await
        .context("list the object's revisions")?
        .items;
    items.sort_by_key(|r| r.revision);
    Ok(items)
}

/// How a rollout ended, if it did.
fn ended(r: &RolloutStatus) -> Option<Result<()>> {
    if conditions::is_true(&r.conditions, CONDITION_COMPLETE) {
        return Some(Ok(()));
    }
    conditions::find(&r.conditions, CONDITION_FAILED)
        .filter(|c| c.status == "True")
        .map(|c| Err(anyhow::anyhow!("rollout failed: {}", c.message)))
}

fn since(t: Option<&k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>) -> String {
    let Some(t) = t else { return String::new() };
    let secs = k8s_openapi::jiff::Timestamp::now()
        .duration_since(t.0)
        .as_secs()
        .max(0);
    match secs {
        0..=119 => format!("{secs}s"),
        120..=7199 => format!("{}m", secs / 60),
        _ => format!("{}h", secs / 3600),
    }
}

/// The rollout as text: a headline, the conditions, a bar and the per-cluster table.
fn render(r: &RolloutStatus, numbers: &HashMap<String, i64>) -> String {
    let number = |name: Option<&str>| match name {
        Some(n) => numbers
            .get(n)
            .map_or_else(|| n.to_owned(), |x| x.to_string()),
        None => "-".to_owned(),
    };
    let mut out = format!("revision {}", r.revision_number);
    if let Some(s) = &r.stable_revision {
        out.push_str(&format!(" (stable: {})", number(Some(s))));
    }
    if let Some(g) = &r.current_group {
        out.push_str(&format!(", group {g}"));
    }
    out.push('\n');
    for t in [CONDITION_PROGRESSING, CONDITION_COMPLETE, CONDITION_FAILED] {
        if let Some(c) = conditions::find(&r.conditions, t) {
            out.push_str(&format!("{t}={} {}: {}\n", c.status, c.reason, c.message));
        }
    }
    let total = r.clusters.len();
    let done = r
        .clusters
        .iter()
        .filter(|c| c.phase == RolloutPhase::Succeeded)
        .count();
    let width = 30;
    let filled = (done * width).checked_div(total).unwrap_or(0);
    out.push_str(&format!(
        "[{}{}] {done}/{total} clusters healthy on revision {}\n\n",
        "#".repeat(filled),
        "-".repeat(width - filled),
        r.revision_number
    ));
    let rows: Vec<[String; 6]> = r
        .clusters
        .iter()
        .map(|c| {
            [
                c.name.clone(),
                c.group.clone().unwrap_or_default(),
                number(c.revision.as_deref()),
                format!("{:?}", c.phase),
                since(c.since.as_ref()),
                c.message.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let header = ["CLUSTER", "GROUP", "REVISION", "PHASE", "SINCE", "MESSAGE"].map(str::to_owned);
    let mut widths = header.clone().map(|h| h.len());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let line: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

async fn status(
    hub: &Client,
    given: &str,
    ns: Option<&str>,
    watch: bool,
    timeout: Option<Duration>,
) -> Result<()> {
    let target = object(hub, given, ns).await?;
    let started = Instant::now();
    let bar = watch.then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} clusters {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar
    });
    loop {
        let b = match try_binding(hub, &target, ns).await? {
            Some(b) => b,
            // Watching: the policy's binding may be on its way.
            None if watch && timeout.is_none_or(|t| started.elapsed() < t) => {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            None => return binding(hub, &target, given, ns).await.map(|_| ()),
        };
        if !b.progressive {
            println!("{given}: its policy has no progressive rolloutStrategy; every change goes to all its clusters at once (see `kubectl get rb {} -o yaml`)", b.name);
            return Ok(());
        }
        let numbers: HashMap<String, i64> = revisions(hub, ns, &b.name)
            .await?
            .into_iter()
            .map(|r| (r.metadata.name.unwrap_or_default(), r.revision))
            .collect();
        let expected = expected_revision(&target, &b.name).await?;
        let current = b
            .rollout
            .filter(|r| expected.as_deref().is_none_or(|e| e == r.revision));
        let Some(r) = current else {
            if !watch {
                println!("{given}: the hub has not started rolling out its latest change yet");
                return Ok(());
            }
            if timeout.is_some_and(|t| started.elapsed() >= t) {
                bail!("timed out waiting for the hub to start rolling out {given}'s latest change");
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        let end = ended(&r);
        match &bar {
            None => {
                print!("{given}: {}", render(&r, &numbers));
                return end.unwrap_or(Ok(()));
            }
            Some(bar) => {
                bar.set_length(r.clusters.len() as u64);
                bar.set_position(
                    r.clusters
                        .iter()
                        .filter(|c| c.phase == RolloutPhase::Succeeded)
                        .count() as u64,
                );
                let progressing = conditions::find(&r.conditions, CONDITION_PROGRESSING);
                bar.set_message(format!(
                    "revision {}{}",
                    r.revision_number,
                    progressing
                        .map(|c| format!(": {}", c.reason))
                        .unwrap_or_default()
                ));
                if let Some(end) = end {
                    bar.finish_and_clear();
                    print!("{given}: {}", render(&r, &numbers));
                    return end;
                }
            }
        }
        if timeout.is_some_and(|t| started.elapsed() >= t) {
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            print!("{given}: {}", render(&r, &numbers));
            bail!(
                "timed out waiting for the rollout of revision {} to end",
                r.revision_number
            );
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn pause(hub: &Client, given: &str, ns: Option<&str>, paused: bool) -> Result<()> {
    let target = object(hub, given, ns).await?;
    let b = binding(hub, &target, given, ns).await?;
    if !b.progressive {
        bail!("{given}: its policy has no progressive rolloutStrategy, so there is no rollout to pause or resume: set spec.rolloutStrategy.type to Progressive or ProgressivePerGroup");
    }
    let value = if paused { json!("true") } else { Value::Null };
    let patch = json!({"metadata": {"annotations": {PAUSED_ANNOTATION: value}}});
    let params = PatchParams::default();
    if target.resource.namespaced {
        let ns = ns.unwrap_or_default();
        Api::<ResourceBinding>::namespaced(hub.clone(), ns)
            .patch(&b.name, &params, &Patch::Merge(&patch))
            .await
            .context("annotate the binding")?;
    } else {
        Api::<ClusterResourceBinding>::all(hub.clone())
            .patch(&b.name, &params, &Patch::Merge(&patch))
            .await
            .context("annotate the cluster binding")?;
    }
    println!("{given} {}", if paused { "paused" } else { "resumed" });
    Ok(())
}

/// The JSON patch setting `current`'s content back to `revision`'s: every top-level field but
/// `apiVersion`, `kind`, `metadata` and `status` replaced, added or removed.
fn undo_patch(current: &Value, revision: &Value) -> Vec<Value> {
    const KEPT: [&str; 4] = ["apiVersion", "kind", "metadata", "status"];
    let mut ops = Vec::new();
    let fields = |v: &Value| -> Vec<String> {
        v.as_object()
            .map(|o| {
                o.keys()
                    .filter(|k| !KEPT.contains(&k.as_str()))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    };
    for k in fields(current) {
        if revision.get(&k).is_none() {
            ops.push(json!({"op": "remove", "path": format!("/{k}")}));
        }
    }
    for k in fields(revision) {
        if current.get(&k) != revision.get(&k) {
            ops.push(json!({"op": "add", "path": format!("/{k}"), "value": revision[&k]}));
        }
    }
    ops
}

async fn undo(hub: &Client, given: &str, ns: Option<&str>, to: Option<i64>) -> Result<()> {
    let target = object(hub, given, ns).await?;
    let b = binding(hub, &target, given, ns).await?;
    if !b.progressive {
        bail!("{given}: its policy has no progressive rolloutStrategy, so flotilla keeps no revisions of it: change the object itself");
    }
    let current = b
        .rollout
        .as_ref()
        .map(|r| r.revision.clone())
        .context("the rollout has not started yet: there is nothing to undo")?;
    let all = revisions(hub, ns, &b.name).await?;
    let chosen = match to {
        Some(n) => all.iter().find(|r| r.revision == n).with_context(|| {
            let known: Vec<String> = all.iter().map(|r| r.revision.to_string()).collect();
            format!("{given} has no revision {n} (it has {})", known.join(", "))
        })?,
        None => all
            .iter()
            .rev()
            .find(|r| r.metadata.name.as_deref() != Some(current.as_str()))
            .context("there is no earlier revision to go back to")?,
    };
    let content = chosen
        .data
        .as_ref()
        .map(|d| d.0.clone())
        .context("the revision holds no template")?;
    let now = target
        .api
        .get(&target.name)
        .await
        .with_context(|| format!("read {given}"))?;
    let now = serde_json::to_value(now).context("the object as JSON")?;
    let ops = undo_patch(&now, &content);
    if ops.is_empty() {
        println!(
            "{given} is already at revision {}'s content",
            chosen.revision
        );
        return Ok(());
    }
    let patch: json_patch::Patch =
        serde_json::from_value(Value::Array(ops)).context("the undo patch")?;
    target
        .api
        .patch(
            &target.name,
            &PatchParams::default(),
            &Patch::<()>::Json(patch),
        )
        .await
        .with_context(|| format!("set {given} back to revision {}", chosen.revision))?;
    println!(
        "{given} set back to revision {}; it rolls out as any change does (`flotilla rollout status {given}{} --watch`)",
        chosen.revision,
        ns.map(|n| format!(" -n {n}")).unwrap_or_default()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_sets_every_field_but_identity_and_status_back() {
        let now = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "resourceVersion": "9"},
            "spec": {"replicas": 3, "template": {"image": "web:2"}}, "status": {"replicas": 3},
            "extra": 1});
        let before = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"}, "spec": {"replicas": 3, "template": {"image": "web:1"}}});
        let ops = undo_patch(&now, &before);
        assert_eq!(
            ops,
            [
                json!({"op": "remove", "path": "/extra"}),
                json!({"op": "add", "path": "/spec", "value": before["spec"]}),
            ]
        );
        assert!(undo_patch(&before, &before).is_empty());
    }
}
