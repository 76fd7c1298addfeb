//! Status flowing back: every change of one of its Works reconciles the binding, which then
//! writes per-cluster status and `FullyApplied` into the binding, and the members' statuses
//! summed ([`super::aggregate`]) into the template's status, so `kubectl get` and `kubectl
//! rollout status` on the hub tell the truth about the fleet.

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_apis::conditions::{self, Set};
use flotilla_apis::work::v1alpha1::{
    AggregatedStatusItem, Work, CONDITION_FULLY_APPLIED, REASON_FULLY_APPLIED,
    REASON_NOT_FULLY_APPLIED,
};
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use serde_json::{json, Value};

use super::aggregate::{self, Member};
use super::feedback;
use super::render::Wrote;
use super::{cluster_of, manifest_status, Context, MANAGER};
use crate::propagation::binding::{apply_status, digest_member_statuses, BindingObject};
use crate::propagation::workload::dynamic_api;
use crate::{Error, Result};

/// One target cluster's part in the template's status: its cluster, the status its member
/// reported, and whether that status is of the current Work and object generation.
pub(super) type MemberStatus = (String, Option<Value>, bool);

/// The binding's per-cluster status items and the members' statuses, for `targets` given
/// their `works` (as read before this reconcile wrote any) and what writing them left
/// (`wrote`): the clusters whose Work could not be written, with why, and those whose Work was
/// just rewritten, whose members' reports are of what they ran before (so not up to date:
/// the template's `observedGeneration` must not move before they report again).
pub(super) fn summarize(
    targets: &[String],
    works: &[Arc<Work>],
    wrote: &Wrote,
) -> (Vec<AggregatedStatusItem>, Vec<MemberStatus>) {
    let failures = &wrote.failures;
    let mut items: Vec<AggregatedStatusItem> = Vec::new();
    let mut members: Vec<MemberStatus> = Vec::new();
    for cluster in targets {
        if let Some(reason) = failures.get(cluster) {
            items.push(AggregatedStatusItem {
                cluster_name: cluster.clone(),
                applied: false,
                applied_message: Some(reason.clone()),
                ..AggregatedStatusItem::default()
            });
            members.push((cluster.clone(), None, false));
            continue;
        }
        let work = works.iter().find(|w| cluster_of(w) == cluster.as_str());
        let status = work.and_then(|w| w.status.as_ref());
        let manifest = work.and_then(|w| manifest_status(w));
        items.push(feedback::item(cluster, manifest));
        let work_observed = !wrote.rewritten.contains(cluster)
            && work.is_some_and(|w| {
                status
                    .and_then(|s| conditions::find(&s.conditions, "Applied"))
                    .and_then(|c| c.observed_generation)
                    == w.metadata.generation
            });
        let member_observed = manifest.is_some_and(|m| {
            let fed = m.feedback.as_ref().and_then(|f| {
                f.values
                    .iter()
                    .find(|v| v.name == "observedGeneration")
                    .and_then(|v| v.value.integer)
            });
            fed.is_none() || fed == m.observed_generation
        });
        members.push((
            cluster.clone(),
            manifest.and_then(feedback::member_status),
            work_observed && member_observed,
        ));
    }
    (items, members)
}

/// `FullyApplied` for the per-cluster `items`: whether every scheduled cluster applied the
/// object (none scheduled counts as not), and the message saying which did not.
pub(super) fn fully_applied(items: &[AggregatedStatusItem]) -> (bool, String) {
    let all_applied = !items.is_empty() && items.iter().all(|i| i.applied);
    let pending: Vec<&str> = items
        .iter()
        .filter(|i| !i.applied)
        .map(|i| i.cluster_name.as_str())
        .collect();
    let message = if all_applied {
        "applied in every scheduled cluster".to_owned()
    } else if items.is_empty() {
        "not scheduled to any cluster".to_owned()
    } else {
        format!("not yet applied in {}", pending.join(", "))
    };
    (all_applied, message)
}

/// Per-cluster status and `FullyApplied` into the binding; the members' statuses summed into
/// the template's (see [`summarize`] for `works` and `wrote`). Answers the template's status
/// when it wrote one.
pub(super) async fn write_status<B: BindingObject>(
    ctx: &Context,
    b: &B,
    api: &Api<B>,
    template: &Value,
    targets: &[String],
    works: &[Arc<Work>],
    wrote: &Wrote,
) -> Result<Option<Value>> {
    let (mut items, members) = summarize(targets, works, wrote);
    let r = &b.spec().resource;
    let interpreter = ctx.interpreters.for_kind(&r.api_version, &r.kind);
    // The members' copies, only for a kind an interpreter reads.
    let objects = interpreter
        .as_deref()
        .filter(|i| i.reads_members())
        .map(|_| member_objects(works))
        .unwrap_or_default();
    if let Some(i) = interpreter.as_deref().filter(|i| i.reads_health()) {
        for item in &mut items {
            let health = objects
                .get(item.cluster_name.as_str())
                .and_then(|obj| feedback::interpreted_health(i, obj));
            if let Some((health, _)) = health {
                item.health = Some(health);
            }
        }
    }
    let (all_applied, message) = fully_applied(&items);
    let now = Timestamp::now();
    let mut conds = b.status().map(|s| s.conditions.clone()).unwrap_or_default();
    let changed = conditions::set(
        &mut conds,
        Set {
            type_: CONDITION_FULLY_APPLIED,
            status: if all_applied { "True" } else { "False" },
            reason: if all_applied {
                REASON_FULLY_APPLIED
            } else {
                REASON_NOT_FULLY_APPLIED
            },
            message: &message,
        },
        now,
    );
    // As the bindings informer keeps them: each member's status as a digest.
    let digested = |items: &[AggregatedStatusItem]| {
        let mut items = items.to_vec();
        digest_member_statuses(&mut items);
        items
    };
    let before = digested(b.status().map_or(&[], |s| &s.aggregated_status));
    if changed || before != digested(&items) {
        let fully = conds
            .iter()
            .find(|c| c.type_ == CONDITION_FULLY_APPLIED)
            .cloned();
        let status = json!({"aggregatedStatus": items, "conditions": [fully]});
        apply_status(api, b, MANAGER, status, "status").await?;
    }
    let view: Vec<Member<'_>> = members
        .iter()
        .map(|(c, s, up)| Member {
            cluster: c,
            status: s.as_ref(),
            up_to_date: *up,
        })
        .collect();
    let stamp = now.to_string();
    let zone = ctx.options.dns_zone.as_deref();
    let summed = match interpreter.as_deref().filter(|i| i.collects_status()) {
        Some(i) => interpreted_status(i, template, targets, &objects),
        None => aggregate::aggregate(template, &view, &stamp, zone),
    };
    if let Some(status) = summed {
        if template.get("status") != Some(&status) {
            write_template_status(ctx, b, status.clone()).await?;
            return Ok(Some(status));
        }
    }
    Ok(None)
}

/// Each cluster's copy of the object, as its Work's manifest and its agent's report rebuild it
/// ([`feedback::member_object`]), for the clusters that reported one.
fn member_objects(works: &[Arc<Work>]) -> HashMap<&str, Value> {
    works
        .iter()
        .filter_map(|w| {
            let manifest = &w.spec.manifests.first()?.0;
            let reported = manifest_status(w)?;
            Some((cluster_of(w), feedback::member_object(manifest, reported)))
        })
        .collect()
}

/// The template's status with the fields a ResourceInterpreter collects from the members of
/// `targets` combined into it; `None` when no member reported a status yet, or a rule fails
/// (then the template keeps what it had, and the error is logged).
pub(super) fn interpreted_status(
    interpreter: &flotilla_interpreter::Interpreter,
    template: &Value,
    targets: &[String],
    objects: &HashMap<&str, Value>,
) -> Option<Value> {
    let mut collected = Vec::new();
    for cluster in targets {
        let Some(obj) = objects
            .get(cluster.as_str())
            .filter(|o| o.get("status").is_some())
        else {
            continue;
        };
        match interpreter.collect(obj) {
            Ok(c) => collected.push((cluster.as_str(), c)),
            Err(error) => {
                tracing::warn!(cluster = %cluster, %error, "a status rule fails on a member's copy");
                return None;
            }
        }
    }
    if collected.is_empty() {
        return None;
    }
    let pairs: Vec<(&str, &flotilla_interpreter::Collected)> =
        collected.iter().map(|(c, x)| (*c, x)).collect();
    let fields = match interpreter.aggregate(&pairs) {
        Ok(Value::Object(fields)) => fields,
        Ok(_) => return None,
        Err(error) => {
            tracing::warn!(%error, "the status rules fail to combine the members' statuses");
            return None;
        }
    };
    let mut status = match template.get("status") {
        Some(Value::Object(s)) => s.clone(),
        _ => serde_json::Map::new(),
    };
    status.extend(fields);
    Some(Value::Object(status))
}

/// What summing the members' statuses reads of a template ([`aggregate::aggregate`], and the
/// replica shares): its apiVersion, kind, name, namespace, uid and generation, its spec's
/// top-level scalars (`replicas`, `completions`, `type`, ...) and its status. Kept per binding
/// between the reconciles that only sum status reports, instead of the whole template (a pod
/// template is most of a workload).
pub(super) fn status_view(template: &Value) -> Value {
    let mut view = serde_json::Map::new();
    for field in ["apiVersion", "kind", "status"] {
        if let Some(v) = template.get(field) {
            view.insert(field.to_owned(), v.clone());
        }
    }
    let mut meta = serde_json::Map::new();
    for field in ["name", "namespace", "uid", "generation"] {
        if let Some(v) = template["metadata"].get(field) {
            meta.insert(field.to_owned(), v.clone());
        }
    }
    view.insert("metadata".to_owned(), Value::Object(meta));
    if let Some(spec) = template.get("spec").and_then(Value::as_object) {
        let scalars = spec
            .iter()
            .filter(|(_, v)| !v.is_object() && !v.is_array())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        view.insert("spec".to_owned(), Value::Object(scalars));
    }
    Value::Object(view)
}

async fn write_template_status<B: BindingObject>(
    ctx: &Context,
    b: &B,
    status: Value,
) -> Result<()> {
    let r = &b.spec().resource;
    let Some((resource, namespaced)) = ctx
        .kinds
        .lock()
        .get(&(r.api_version.clone(), r.kind.clone()))
        .cloned()
    else {
        return Ok(());
    };
    let api = dynamic_api(
        ctx.hub.clone(),
        &resource,
        namespaced,
        r.namespace.as_deref(),
    );
    // A JSON patch replacing the whole status; its answer (the template) is not read.
    match flotilla_watch::quiet::replace_status(&api, &r.name, &status).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(Error::hub(format!(
            "write the status of {} {}",
            r.kind, r.name
        ))(e)),
    }
}

#[cfg(test)]
mod tests;
