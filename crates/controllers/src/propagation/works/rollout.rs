//! Progressive rollouts (`spec.rolloutStrategy` of the policy, copied into the binding): the
//! binding controller's path for a binding whose changes go cluster by cluster.
//!
//! The template as it is now is a revision: a `ControllerRevision` on the hub, in the binding's
//! namespace (`flotilla-system` for a cluster-scoped template), named after the binding and the
//! hash of the template, owned by the binding, numbered as revisions become current (a template
//! set back to an earlier content makes that revision current again, with a new number, as
//! kubectl does). Each reconcile decides the rollout's step ([`plan`]) from what the members
//! report about their Works (each Work says which revision it carries in the annotation
//! `rollout.flotilla.io/revision`), renders each cluster's Work from the revision the step
//! gives it, writes `status.rollout` (manager `flotilla-rollout`), records Events on the
//! template for steps, failures and completion, and comes back when a success time or a
//! deadline ends. Revisions no cluster carries are kept, ten at most, for `flotilla rollout
//! undo`.

pub mod plan;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use flotilla_apis::conditions;
use flotilla_apis::names::SYSTEM_NAMESPACE;
use flotilla_apis::policy::v1alpha1::RolloutStrategy;
use flotilla_apis::work::v1alpha1::{
    ResourceHealth, Work, CONDITION_APPLIED, CONDITION_AVAILABLE, CONDITION_DEGRADED,
    PAUSED_ANNOTATION, REVISION_HASH_LABEL, WORK_REVISION_ANNOTATION,
};
use flotilla_interpreter::Interpreter;
use k8s_openapi::api::apps::v1::ControllerRevision;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::Timestamp;
use kube::api::{ListParams, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, ResourceExt};
use serde_json::{json, Value};

use self::plan::{Input, Member, Render, State};
use super::deletion::delete_work;
use super::eviction::end_tasks;
use super::render::{leaving, targets, write_works, Wrote};
use super::shares::shares;
use super::status::write_status;
use super::{cluster_of, feedback, live_works, manifest_status, progress_by_cluster, Context};
use crate::propagation::binding::{apply_status, BindingObject, BINDING_LABEL};
use crate::propagation::feed::requeue_at;
use crate::propagation::workload::{binding_label, fnv64};
use crate::{Error, Result};

/// Field manager of `status.rollout`.
pub const MANAGER: &str = "flotilla-rollout";
/// Revisions kept that no cluster carries and that are neither current nor stable.
const HISTORY: usize = 10;

/// The binding's progressive strategy, if it has one.
pub(super) fn progressive(
    spec: &flotilla_apis::work::v1alpha1::ResourceBindingSpec,
) -> Option<&RolloutStrategy> {
    spec.rollout_strategy.as_ref().filter(|s| s.progressive())
}

/// What a revision holds of a template: what rendering keeps of it
/// ([`crate::render::strip_hub_fields`]: no status, no metadata the hub sets, no kubectl
/// last-applied copy), so a change only of those is no new revision.
pub fn revision_content(template: &Value) -> Value {
    let mut content = template.clone();
    crate::render::strip_hub_fields(&mut content);
    content
}

/// The name of the revision of `binding` holding `content`, and the content's hash.
pub fn revision_name(binding: &str, content: &Value) -> (String, String) {
    let hash = format!("{:016x}", fnv64(content.to_string().as_bytes()));
    let prefix: String = binding.chars().take(253 - 11).collect();
    (format!("{prefix}-{}", &hash[..10]), hash)
}

/// The namespace of a binding's revisions.
pub fn revision_namespace(binding_namespace: Option<&str>) -> &str {
    binding_namespace.unwrap_or(SYSTEM_NAMESPACE)
}

/// What a member reports about its Work's revision: applied for the Work's generation, then
/// healthy by the kind's ResourceInterpreter's health rule when it has one, else by the
/// member's `Available` and `Degraded`.
fn state_of(work: Option<&Work>, interpreter: Option<&Interpreter>) -> State {
    let Some(w) = work else {
        return State::Pending("no Work yet".into());
    };
    let observed = w
        .status
        .as_ref()
        .and_then(|s| conditions::find(&s.conditions, CONDITION_APPLIED))
        .and_then(|c| c.observed_generation);
    if observed != w.metadata.generation {
        return State::Pending("the member has not applied this revision yet".into());
    }
    let Some(m) = manifest_status(w) else {
        return State::Pending("not reported by the member yet".into());
    };
    let find = |t| conditions::find(&m.conditions, t);
    let say = |c: &k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition| {
        if c.message.is_empty() {
            c.reason.clone()
        } else {
            c.message.clone()
        }
    };
    match find(CONDITION_APPLIED) {
        Some(c) if c.status == "True" => {}
        Some(c) => return State::Pending(format!("not applied: {}", say(c))),
        None => return State::Pending("not applied yet".into()),
    }
    let manifest = w.spec.manifests.first().map(|m| &m.0);
    if let Some((health, why)) = interpreter.zip(manifest).and_then(|(i, manifest)| {
        feedback::interpreted_health(i, &feedback::member_object(manifest, m))
    }) {
        return match health {
            ResourceHealth::Healthy => State::Healthy,
            _ if why.is_empty() => State::Pending("not healthy by its ResourceInterpreter".into()),
            _ => State::Pending(why),
        };
    }
    if let Some(c) = find(CONDITION_DEGRADED).filter(|c| c.status == "True") {
        return State::Failed(say(c));
    }
    match find(CONDITION_AVAILABLE) {
        Some(c) if c.status == "True" => State::Healthy,
        Some(c) => State::Pending(say(c)),
        None => State::Pending("availability not reported yet".into()),
    }
}

/// The target clusters as the planner sees them.
fn members(
    ctx: &Context,
    strategy: &RolloutStrategy,
    targets: &[String],
    live: &[Arc<Work>],
    interpreter: Option<&Interpreter>,
) -> Vec<Member> {
    targets
        .iter()
        .map(|name| {
            let group = ctx.clusters.get(&ObjectRef::new(name)).and_then(|c| {
                strategy.groups.iter().position(|g| {
                    flotilla_scheduler::filter::affinity(&g.cluster_affinity, &c).is_ok()
                })
            });
            let work = live.iter().find(|w| cluster_of(w) == name.as_str());
            let revision =
                work.and_then(|w| w.annotations().get(WORK_REVISION_ANNOTATION).cloned());
            Member {
                name: name.clone(),
                group,
                unmarked: work.is_some() && revision.is_none(),
                revision,
                state: state_of(work.map(|w| &**w), interpreter),
            }
        })
        .collect()
}

/// The binding's revisions, and the current one made sure of: created, or renumbered when it
/// becomes current again. Answers its number.
async fn current_revision<B: BindingObject>(
    api: &Api<ControllerRevision>,
    revisions: &mut Vec<ControllerRevision>,
    b: &B,
    label: &str,
    (name, hash): (&str, &str),
    content: &Value,
) -> Result<i64> {
    let newest = revisions.iter().map(|r| r.revision).max().unwrap_or(0);
    if let Some(r) = revisions
        .iter_mut()
        .find(|r| r.metadata.name.as_deref() == Some(name))
    {
        if r.revision < newest {
            let patch = json!({"revision": newest + 1});
            *r = api
                .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map_err(Error::hub(format!("renumber revision {name}")))?;
        }
        return Ok(r.revision);
    }
    let owner = json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": B::kind(&()),
        "name": b.name_any(),
        "uid": b.meta().uid,
    });
    let revision: ControllerRevision = serde_json::from_value(json!({
        "metadata": {
            "name": name,
            "labels": {BINDING_LABEL: label, REVISION_HASH_LABEL: hash},
            "ownerReferences": [owner],
        },
        "data": content,
        "revision": newest + 1,
    }))
    .map_err(|e| Error::Invalid(format!("revision {name}: {e}")))?;
    let created = match api.create(&PostParams::default(), &revision).await {
        Ok(r) => r,
        Err(kube::Error::Api(e)) if e.code == 409 => api
            .get(name)
            .await
            .map_err(Error::hub(format!("read revision {name}")))?,
        Err(e) => return Err(Error::hub(format!("create revision {name}"))(e)),
    };
    let number = created.revision;
    revisions.push(created);
    Ok(number)
}

/// Deletes the revisions beyond the newest [`HISTORY`] that nothing uses.
async fn prune(
    api: &Api<ControllerRevision>,
    revisions: &[ControllerRevision],
    in_use: &HashSet<&str>,
) -> Result<()> {
    let mut unused: Vec<&ControllerRevision> = revisions
        .iter()
        .filter(|r| !in_use.contains(r.metadata.name.as_deref().unwrap_or_default()))
        .collect();
    unused.sort_by_key(|r| std::cmp::Reverse(r.revision));
    for r in unused.into_iter().skip(HISTORY) {
        let name = r.name_any();
        match api.delete(&name, &Default::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(Error::hub(format!("delete revision {name}"))(e)),
        }
    }
    Ok(())
}

/// One reconcile of a binding with a progressive strategy, its template read fresh.
pub(super) async fn reconcile<B: BindingObject>(
    ctx: &Context,
    b: &B,
    api: &Api<B>,
    template: &Value,
    works: &[Arc<Work>],
    strategy: &RolloutStrategy,
) -> Result<Action> {
    let spec = b.spec();
    let name = b.name_any();
    let ns = b.scope_namespace();
    let label = binding_label(ns, &name);
    let targets = targets(spec);
    let wanted = shares(spec, template);
    let live = live_works(works);

    let content = revision_content(template);
    let (revision, hash) = revision_name(&name, &content);
    let rapi: Api<ControllerRevision> = Api::namespaced(ctx.hub.clone(), revision_namespace(ns));
    let mut revisions = rapi
        .list(&ListParams::default().labels(&format!("{BINDING_LABEL}={label}")))
        .await
        .map_err(Error::hub(format!("list the revisions of binding {name}")))?
        .items;
    let number = current_revision(
        &rapi,
        &mut revisions,
        b,
        &label,
        (&revision, &hash),
        &content,
    )
    .await?;

    let interpreter = ctx
        .interpreters
        .for_kind(&spec.resource.api_version, &spec.resource.kind);
    let members = members(ctx, strategy, &targets, &live, interpreter.as_deref());
    let paused = strategy.paused
        || b.annotations().get(PAUSED_ANNOTATION).map(String::as_str) == Some("true");
    let previous = b.status().and_then(|s| s.rollout.as_ref());
    let now = Timestamp::now();
    let step = plan::plan(&Input {
        strategy,
        paused,
        revision: &revision,
        number,
        members: &members,
        previous,
        now,
    });

    // Each cluster's Work from the revision the step gives it.
    let mut by_revision: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (cluster, render) in &step.render {
        if let Render::Revision(r) = render {
            by_revision
                .entry(r.as_str())
                .or_default()
                .push(cluster.clone());
        }
    }
    let mut wrote = Wrote::default();
    for (r, clusters) in by_revision {
        let held = if r == revision {
            Some(template.clone())
        } else {
            revisions
                .iter()
                .find(|x| x.metadata.name.as_deref() == Some(r))
                .and_then(|x| x.data.as_ref())
                .map(|d| d.0.clone())
        };
        match held {
            Some(t) => {
                wrote.extend(write_works(ctx, b, &t, &clusters, &wanted, works, Some(r)).await?);
            }
            None => {
                for c in clusters {
                    let why = format!("revision {r} is gone from the hub");
                    wrote.failures.insert(c, why);
                }
            }
        }
    }
    for w in leaving(works, &targets, &spec.graceful_eviction_tasks) {
        delete_work(&ctx.hub, w).await?;
    }
    write_status(ctx, b, api, template, &targets, works, &wrote).await?;
    if previous != Some(&step.status) {
        let status = json!({"rollout": step.status});
        apply_status(api, b, MANAGER, status, "rollout status").await?;
    }
    record(ctx, b, &step.notes).await;

    let mut in_use: HashSet<&str> = HashSet::from([revision.as_str()]);
    in_use.extend(step.status.stable_revision.as_deref());
    in_use.extend(
        step.status
            .clusters
            .iter()
            .filter_map(|c| c.revision.as_deref()),
    );
    prune(&rapi, &revisions, &in_use).await?;

    if spec.graceful_eviction_tasks.is_empty() {
        return Ok(requeue_at(step.wake, now));
    }
    let progress = progress_by_cluster(&live);
    let action = end_tasks(
        api,
        b,
        &targets,
        &wanted,
        &progress,
        ctx.options.eviction_timeout,
    )
    .await?;
    Ok(if step.wake.is_some() {
        requeue_at(step.wake, now)
    } else {
        action
    })
}

/// Removes `status.rollout` from a binding whose strategy is no longer progressive (this
/// manager's apply of nothing gives up the fields it owned).
pub(super) async fn forget<B: BindingObject>(b: &B, api: &Api<B>) -> Result<()> {
    if b.status().and_then(|s| s.rollout.as_ref()).is_none() {
        return Ok(());
    }
    apply_status(api, b, MANAGER, json!({}), "rollout status (cleared)").await
}

/// Events on the template for what the step changed, and the metrics.
async fn record<B: BindingObject>(ctx: &Context, b: &B, notes: &[plan::Note]) {
    let r = &b.spec().resource;
    let reference = ObjectReference {
        api_version: Some(r.api_version.clone()),
        kind: Some(r.kind.clone()),
        namespace: r.namespace.clone(),
        name: Some(r.name.clone()),
        uid: r.uid.clone(),
        ..ObjectReference::default()
    };
    for note in notes {
        crate::metrics::metrics().rollout_event(note.reason);
        let event = Event {
            type_: if note.warning {
                EventType::Warning
            } else {
                EventType::Normal
            },
            reason: note.reason.into(),
            note: Some(note.message.clone()),
            action: "Rollout".into(),
            secondary: None,
        };
        if let Err(error) = ctx.recorder.publish(&event, &reference).await {
            tracing::warn!(binding = %b.name_any(), %error, "record a rollout Event");
        }
        tracing::info!(binding = %b.name_any(), namespace = ?b.scope_namespace(), reason = note.reason, message = %note.message, "rollout");
    }
}

#[cfg(test)]
mod tests;
