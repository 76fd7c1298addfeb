//! The detector: matches hub objects to propagation policies and keeps one binding per
//! matched object.
//!
//! It watches PropagationPolicies and ClusterPropagationPolicies, and, for every
//! `apiVersion`/`kind` a policy's `resourceSelectors` name, the objects of that kind (one
//! kube-runtime controller per kind, started when a policy first names it). An object is
//! reconciled when it changes, and every object of every kind is reconciled again when any
//! policy changes, so a policy that arrives after its objects, or is edited, takes effect.
//!
//! For a matched object it server-side applies (manager `flotilla-detector`) a binding named
//! `<name>-<kind>` ([`super::workload::binding_name`]) owned by the object, so the hub's garbage
//! collector removes the binding with it. The binding gets the policy's placement and options,
//! the object's replica count and per-replica requests, and a hash of the object, which makes
//! the binding controller render again when the object is edited. A binding whose content
//! would not change is not written. An object no policy matches any more keeps its binding:
//! deleting or narrowing a policy never removes running workloads from the fleet (delete the
//! object, or its binding, for that).

mod desired;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::conditions;
use flotilla_apis::config::v1alpha1::ResourceInterpreter;
use flotilla_apis::policy::v1alpha1::{ClusterPropagationPolicy, PropagationPolicy};
use flotilla_apis::work::v1alpha1::{ClusterResourceBinding, ResourceBinding};
use flotilla_interpreter::Interpreter;
use flotilla_watch::{Compact, Dictionary, PackedObject};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DynamicObject, Patch, PatchParams};
use kube::discovery::ApiResource;
use kube::runtime::controller::{self, Action};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{watcher, Controller, WatchStreamExt};
use kube::{Api, Client};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::broadcast;

pub use self::desired::{desired, desired_sized, excluded_namespace, kept_by_each_cluster};
use self::desired::{named_kinds, unwatched, up_to_date};
use super::binding::{unpack, BindingObject, Bindings, DETECTOR_HASH_ANNOTATION};
use super::feed::{feed, Changes};
use super::interpreters::Interpreters;
use super::select::{choose, Chosen, Subject};
use super::workload::Sizing;
use super::workload::{binding_name, discover};
use crate::shards::{binding_key, Shards};
use crate::{Error, Result};

/// Field manager of the detector's writes.
pub const MANAGER: &str = "flotilla-detector";

struct Shared {
    hub: Client,
    shards: Shards,
    policies: Store<PropagationPolicy>,
    cluster_policies: Store<ClusterPropagationPolicy>,
    bindings: Store<Compact<ResourceBinding>>,
    cluster_bindings: Store<Compact<ClusterResourceBinding>>,
    /// How kinds without compiled rules count their replicas.
    interpreters: Interpreters,
}

struct KindContext {
    shared: Arc<Shared>,
    /// Shared by every key of the kind's store and queue (an `ApiResource` is five strings).
    resource: Arc<ApiResource>,
    namespaced: bool,
}

/// Runs until dropped, for the templates whose bindings are in the shards `shards` owns.
pub async fn run(hub: Client, shards: Shards, bindings: Bindings) {
    let (policies, pp_writer) = reflector::store();
    let (cluster_policies, cpp_writer) = reflector::store();
    let (interpreters, ri_writer) = reflector::store();
    let changed = Changes::default();
    // A changed interpreter may change any binding's replicas.
    let ri_feed = feed(
        Api::<ResourceInterpreter>::all(hub.clone()),
        ri_writer,
        Some(changed.clone()),
    );
    let pp_feed = feed(
        Api::<PropagationPolicy>::all(hub.clone()),
        pp_writer,
        Some(changed.clone()),
    );
    let cpp_feed = feed(
        Api::<ClusterPropagationPolicy>::all(hub.clone()),
        cpp_writer,
        Some(changed.clone()),
    );
    let shared = Arc::new(Shared {
        hub,
        shards,
        policies,
        cluster_policies,
        bindings: bindings.of::<ResourceBinding>().store(),
        cluster_bindings: bindings.of::<ClusterResourceBinding>().store(),
        interpreters: Interpreters::new(interpreters),
    });
    tokio::select! {
        _ = ri_feed => {},
        _ = pp_feed => {},
        _ = cpp_feed => {},
        _ = supervise(shared, changed) => {},
    }
}

/// Starts a controller for every kind a policy names, as policies appear.
async fn supervise(shared: Arc<Shared>, changed: Changes) {
    let mut events = changed.subscribe();
    let _ = shared.bindings.wait_until_ready().await;
    let _ = shared.cluster_bindings.wait_until_ready().await;
    let _ = shared.policies.wait_until_ready().await;
    let _ = shared.cluster_policies.wait_until_ready().await;
    shared.interpreters.ready().await;
    let mut started: HashSet<(String, String)> = HashSet::new();
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        let named = named_kinds(&shared.policies.state(), &shared.cluster_policies.state());
        for (api_version, kind) in unwatched(named, &started) {
            match discover(&shared.hub, &api_version, &kind).await {
                Ok((resource, namespaced)) => {
                    tracing::info!(%api_version, %kind, "detector watches a new kind");
                    started.insert((api_version, kind));
                    let ctx = Arc::new(KindContext {
                        shared: shared.clone(),
                        resource: Arc::new(resource),
                        namespaced,
                    });
                    tasks.spawn(watch_kind(ctx, changed.stream()));
                }
                // Not served (yet): a CRD may come later; the next policy event retries.
                Err(e) => {
                    tracing::debug!(%api_version, %kind, error = %e, "kind named by a policy is not served")
                }
            }
        }
        tokio::select! {
            r = events.recv() => {
                if matches!(r, Err(broadcast::error::RecvError::Closed)) {
                    return;
                }
            }
            // Kinds whose CRD arrives after the policy are picked up within a minute.
            _ = tokio::time::sleep(Duration::from_secs(60)) => {}
        }
    }
}

async fn watch_kind(
    ctx: Arc<KindContext>,
    policies_changed: impl futures::Stream<Item = ()> + Send + 'static,
) {
    let api = Api::<DynamicObject>::all_with(ctx.shared.hub.clone(), &ctx.resource);
    // As `Controller::new_with`, with a store that keeps the templates packed (metadata typed,
    // the rest as JSON text, parsed when reconciled) and without their status, which nothing
    // the detector writes depends on (the binding controller writes it, summed from the
    // members: a third of a Deployment kept 10,000 times).
    let writer = reflector::store::Writer::<PackedObject>::new(ctx.resource.clone());
    let reader = writer.as_reader();
    let templates = watcher(api, watcher::Config::default())
        .default_backoff()
        .map_ok({
            let mut dictionary = Dictionary::default();
            move |e| PackedObject::pack_event(e, &["status"], &mut dictionary)
        })
        .reflect(writer)
        .applied_objects();
    Controller::for_stream_with(templates, reader, ctx.resource.clone())
        .with_config(controller::Config::default().concurrency(super::feed::CONCURRENCY))
        .reconcile_all_on(policies_changed)
        .reconcile_all_on(ctx.shared.shards.gained())
        .run(reconcile, error_policy, ctx)
        .for_each(crate::metrics::count("detector"))
        .await;
}

fn error_policy(obj: Arc<PackedObject>, error: &Error, _: Arc<KindContext>) -> Action {
    tracing::warn!(name = ?obj.metadata.name, namespace = ?obj.metadata.namespace, %error, "detector");
    Action::requeue(Duration::from_secs(5))
}

async fn reconcile(obj: Arc<PackedObject>, ctx: Arc<KindContext>) -> Result<Action> {
    // The template's shard is its binding's.
    let ns = obj.metadata.namespace.as_deref().filter(|_| ctx.namespaced);
    let name = obj.metadata.name.as_deref().unwrap_or_default();
    let key = binding_key(ns, &binding_name(name, &ctx.resource.kind));
    let shards = ctx.shared.shards.clone();
    shards.reconcile(&key, reconcile_owned(obj, ctx)).await
}

async fn reconcile_owned(obj: Arc<PackedObject>, ctx: Arc<KindContext>) -> Result<Action> {
    let meta = &obj.metadata;
    let ns = meta.namespace.as_deref();
    let name = meta.name.as_deref().unwrap_or_default();
    let api_version = &ctx.resource.api_version;
    if meta.deletion_timestamp.is_some()
        || ns.is_some_and(excluded_namespace)
        || kept_by_each_cluster(api_version, &ctx.resource.kind, ns, name)
    {
        return Ok(Action::await_change());
    }
    let mut template = obj
        .to_value()
        .map_err(|e| Error::Invalid(format!("{name}: not JSON: {e}")))?;
    // Labels are kept in the packed text, with the rest of the object.
    let labels = template["metadata"]
        .get("labels")
        .and_then(|l| BTreeMap::<String, String>::deserialize(l).ok())
        .unwrap_or_default();
    let subject = Subject {
        api_version: &ctx.resource.api_version,
        kind: &ctx.resource.kind,
        namespace: ns,
        name,
        labels: &labels,
    };
    let policies = ctx.shared.policies.state();
    let cluster_policies = ctx.shared.cluster_policies.state();
    let Some(chosen) = choose(&subject, &policies, &cluster_policies) else {
        return Ok(Action::await_change());
    };
    template["apiVersion"] = json!(ctx.resource.api_version);
    template["kind"] = json!(ctx.resource.kind);
    let interpreter = ctx
        .shared
        .interpreters
        .for_kind(api_version, &ctx.resource.kind);
    let bname = binding_name(name, &ctx.resource.kind);
    let plan = Plan {
        template: &template,
        chosen: &chosen,
        interpreter: interpreter.as_deref(),
        name: &bname,
    };
    if ctx.namespaced {
        settle(&ctx, &ctx.shared.bindings, ns, plan).await
    } else {
        settle(&ctx, &ctx.shared.cluster_bindings, None, plan).await
    }
}

/// What the binding of one template is made from.
struct Plan<'a> {
    /// The template, with `apiVersion` and `kind` set.
    template: &'a serde_json::Value,
    /// The policy that chose it.
    chosen: &'a Chosen<'a>,
    /// The kind's ResourceInterpreter, if any.
    interpreter: Option<&'a Interpreter>,
    /// The binding's name.
    name: &'a str,
}

/// Brings binding `plan.name` of scope `B` (in `ns`, kept in `store`) in step with its
/// template: applied when its content would change, its [`INTERPRETED`] condition set when an
/// interpreter has its say.
async fn settle<B: BindingObject>(
    ctx: &KindContext,
    store: &Store<Compact<B>>,
    ns: Option<&str>,
    plan: Plan<'_>,
) -> Result<Action> {
    let bname = plan.name;
    let key = ObjectRef::<Compact<B>>::new(bname);
    let current = store.get(&match ns {
        Some(ns) => key.within(ns),
        None => key,
    });
    let sizing = match Sizing::of(plan.template, plan.interpreter) {
        Ok(s) => s,
        Err(e) => {
            // The binding keeps what it had; it says why, and the template is looked at
            // again when it or the interpreter changes (or within a minute).
            tracing::warn!(binding = %bname, namespace = ?ns, error = %e, "a ResourceInterpreter rule failed");
            let known = current.map(|b| kept_conditions(&b));
            interpreted::<B>(ctx, ns, bname, known, Some(&e.to_string())).await?;
            return Ok(Action::requeue(Duration::from_secs(60)));
        }
    };
    let body = desired_sized(plan.template, ctx.namespaced, plan.chosen, &sizing);
    let hash = body["metadata"]["annotations"][DETECTOR_HASH_ANNOTATION]
        .as_str()
        .unwrap_or_default();
    // The binding's conditions as last seen (`None`: there is no binding), when an interpreter
    // reading the replicas has its say on them.
    let reads = plan.interpreter.is_some_and(|i| i.reads_replicas());
    let known = if up_to_date(current.as_deref(), hash) {
        current.filter(|_| reads).map(|b| kept_conditions(&b))
    } else {
        let params = PatchParams::apply(MANAGER).force();
        let written = B::api(ctx.shared.hub.clone(), ns)
            .patch(bname, &params, &Patch::Apply(&body))
            .await
            .map_err(Error::hub(format!(
                "apply {} {}{bname}",
                B::kind(&()),
                ns.map(|ns| format!("{ns}/")).unwrap_or_default()
            )))?;
        Some(conditions_of(&written))
    };
    if reads {
        interpreted::<B>(ctx, ns, bname, known, None).await?;
    }
    Ok(Action::await_change())
}

/// The binding condition saying whether the kind's ResourceInterpreter read the template's
/// replicas (`failed`: why not).
const INTERPRETED: &str = "Interpreted";

/// A binding's conditions.
fn conditions_of<B: BindingObject>(b: &B) -> Vec<Condition> {
    b.status().map(|s| s.conditions.clone()).unwrap_or_default()
}

/// The conditions of a binding as the informer keeps it.
fn kept_conditions<B: BindingObject>(kept: &Compact<B>) -> Vec<Condition> {
    unpack(kept).map(|b| conditions_of(&*b)).unwrap_or_default()
}

/// Set [`INTERPRETED`] on binding `bname` of scope `B` (in `ns`), whose conditions are
/// `known`, when it says something else; a binding not there (`known` is `None`) is left alone.
async fn interpreted<B: BindingObject>(
    ctx: &KindContext,
    ns: Option<&str>,
    bname: &str,
    known: Option<Vec<Condition>>,
    failed: Option<&str>,
) -> Result<()> {
    let (status, reason, message) = match failed {
        None => (
            "True",
            "Interpreted",
            "replicas and requests read by the kind's ResourceInterpreter",
        ),
        Some(why) => ("False", "RuleFailed", why),
    };
    let set = conditions::Set {
        type_: INTERPRETED,
        status,
        reason,
        message,
    };
    let Some(mut list) = known else {
        return Ok(());
    };
    if !conditions::set(&mut list, set, Timestamp::now()) {
        return Ok(());
    }
    let condition = conditions::find(&list, INTERPRETED).cloned();
    let body = json!({"apiVersion": B::api_version(&()), "kind": B::kind(&()),
        "status": {"conditions": [condition]}});
    let params = PatchParams::apply(MANAGER).force();
    let api = B::api(ctx.shared.hub.clone(), ns);
    // The answer (the binding with its whole status) is not read.
    flotilla_watch::quiet::patch(&api, bname, Some("status"), &params, &Patch::Apply(&body))
        .await
        .map(drop)
        .map_err(Error::hub(format!(
            "write the {INTERPRETED} condition of {bname}"
        )))
}

#[cfg(test)]
mod tests;
