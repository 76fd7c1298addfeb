//! The binding controller: from a scheduled binding to one Work per cluster, and from the
//! Works' status back to the binding and the template.
//!
//! For a binding whose placement the scheduler has observed, it reads the template, renders
//! it per cluster ([`crate::render::render`]: hub fields stripped, the cluster's replica
//! share ([`shares`](mod@shares)), the override rules that target the cluster) and
//! server-side applies (manager `flotilla-binding`) a Work named after the binding in the
//! cluster's execution namespace (`render`). Works of clusters the binding left are deleted,
//! except while a graceful eviction keeps one ([`eviction`]). A Work is only written when what
//! it would say changed (a hash in the annotation `work.flotilla.io/render-hash`). A Work
//! carries the delivering side's finalizer `work.flotilla.io/cleanup` from its creation.
//!
//! A binding event that changes none of what the work depends on (`inputs`: most are status
//! writes, this controller's own among them) is answered from the last settled reconcile,
//! without reading the template or rendering again.
//!
//! Status flows back the same way: the changes of its Works reconcile the binding (those of a
//! quarter second at once, [`WORK_EVENTS_WINDOW`]), which then writes per-cluster status and
//! `FullyApplied` into the binding, and the members' statuses summed ([`aggregate`]) into the
//! template's status (`status`).
//!
//! Reach: a ResourceBinding propagates only objects of its own namespace, and every manifest
//! of its Works stays there after overrides; nothing of the hub's own is propagated. A binding
//! out of its reach gets no Works (`refuse`).
//!
//! Deletion (`deletion`): the binding carries the finalizer
//! `work.flotilla.io/binding-cleanup`; when the template goes (the hub's garbage collector
//! deletes the binding it owns), the binding's Works are deleted, which removes the objects
//! from the members, unless the template was annotated `propagation.flotilla.io/orphan:
//! "true"` (then the Works say `deletePolicy: Orphan` and the member copies stay).

pub mod aggregate;
mod deletion;
pub mod eviction;
pub mod feedback;
mod index;
mod inputs;
mod refuse;
mod render;
pub mod rollout;
pub mod shares;
mod status;
mod watch;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::config::v1alpha1::ResourceInterpreter;
use flotilla_apis::policy::v1alpha1::{ClusterOverridePolicy, OverridePolicy};
use flotilla_apis::work::v1alpha1::{
    ClusterResourceBinding, ManifestStatus, ResourceBinding, ResourceBindingSpec, Work,
};
use flotilla_watch::{Compact, Packed};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::discovery::ApiResource;
use kube::runtime::controller::Action;
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::{Api, Client, Resource, ResourceExt};
use parking_lot::Mutex;
use serde_json::{json, Value};

use self::deletion::{delete_work, finish_deletion, set_finalizer};
use self::eviction::{end_tasks, hold_shrinking, progress, Progress};
use self::index::WorkIndex;
use self::inputs::{Inputs, Rendered};
use self::refuse::refuse;
use self::render::{leaving, targets, template, write_works, Template, Wrote};
use self::shares::shares;
use self::status::{status_view, write_status};
use super::binding::{unpack, BindingObject, Bindings, Wake, BINDING_FINALIZER};
use super::feed::{feed, feed_on_change, Changes, Seen};
use super::interpreters::Interpreters;
use super::scope;
use super::settled::Settled;
use super::workload::{binding_label, fnv64};
use crate::shards::{binding_key, Shards};
use crate::{Error, Result};

/// How long a binding's Work events are gathered before the binding is reconciled for them:
/// its clusters' status reports arrive close together, and one reconcile (one status write
/// on the binding and one on the template) answers all those of the window. The binding's own
/// changes (a new placement, a template change through the detector) are not held.
const WORK_EVENTS_WINDOW: Duration = Duration::from_millis(250);

/// Field manager of the binding controller's writes.
pub const MANAGER: &str = "flotilla-binding";
/// Annotation on a Work: the hash of what the binding controller last wrote.
pub const RENDER_HASH_ANNOTATION: &str = "work.flotilla.io/render-hash";

/// Options of the binding controller.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long the copy in a cluster failover left is kept, at most, for its replacement to
    /// come up, when its eviction task names no grace period
    /// (`serve --graceful-eviction-timeout`).
    pub eviction_timeout: Duration,
    /// The fleet's DNS zone (`serve --dns-zone`), without a trailing dot. With one, a
    /// federated LoadBalancer Service on the hub shows its fleet name
    /// (`<svc>.<ns>.<zone>`) as its ingress instead of the members' addresses
    /// ([`aggregate::aggregate`]).
    pub dns_zone: Option<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            eviction_timeout: Duration::from_secs(600),
            dns_zone: None,
        }
    }
}

struct Context {
    hub: Client,
    shards: Shards,
    options: Options,
    clusters: Store<Cluster>,
    /// Every bound Work, trimmed ([`watch::trim`]) and kept as JSON text: with a few per
    /// binding, they are the largest thing the hub's controllers hold.
    works: Packed<Work>,
    /// Each binding's Works in `works`.
    index: Arc<WorkIndex>,
    overrides: Store<OverridePolicy>,
    cluster_overrides: Store<ClusterOverridePolicy>,
    kinds: Mutex<HashMap<(String, String), (ApiResource, bool)>>,
    /// Where kinds without compiled rules take a divided count.
    interpreters: Interpreters,
    /// Told when an override policy or an interpreter changes, or a cluster registers (a
    /// registered cluster's change only bumps its epoch).
    changed: Changes,
    /// The bindings whose last render left a cluster without its Work.
    failing: Arc<watch::Failing>,
    /// Each binding's inputs when its last reconcile left nothing to do.
    settled: Settled<Inputs>,
    /// What each binding's Works were last rendered from, and the template.
    rendered: Settled<Rendered>,
    /// Events on templates (progressive rollouts).
    recorder: Recorder,
}

/// Runs until dropped, for the bindings in the shards `shards` owns.
pub async fn run(hub: Client, options: Options, shards: Shards, bindings: Bindings) {
    let (clusters, cluster_writer) = reflector::store();
    let works = Packed::default();
    let (overrides, op_writer) = reflector::store();
    let (cluster_overrides, cop_writer) = reflector::store();
    let (interpreters, ri_writer) = reflector::store();
    let index = Arc::new(WorkIndex::default());
    let changed = Changes::default();
    // An interpreter's reviseReplicas rule is part of every Work of its kind.
    let ri_feed = feed(
        Api::<ResourceInterpreter>::all(hub.clone()),
        ri_writer,
        Some(changed.clone()),
    );
    let op_feed = feed(
        Api::<OverridePolicy>::all(hub.clone()),
        op_writer,
        Some(changed.clone()),
    );
    let cop_feed = feed(
        Api::<ClusterOverridePolicy>::all(hub.clone()),
        cop_writer,
        Some(changed.clone()),
    );
    let (wake, (rb_rx, crb_rx)) = Wake::new();
    // Overrides select clusters by name, labels and topology. A new cluster may be what any
    // binding waits for; a registered one that changed matters only to the bindings that
    // render for it (`watch::wake_on_cluster`), not to the whole fleet's.
    let (cluster_tx, cluster_rx) = tokio::sync::mpsc::unbounded_channel();
    let cluster_feed = feed_on_change(
        Api::<Cluster>::all(hub.clone()),
        cluster_writer,
        {
            let changed = changed.clone();
            move |seen| match seen {
                Seen::New(_) => changed.notify(),
                Seen::Changed(name) => {
                    changed.bump();
                    let _ = cluster_tx.send(name.to_owned());
                }
            }
        },
        |c: &Cluster| fnv64(json!([c.metadata.labels, c.spec]).to_string().as_bytes()),
        labels_and_spec,
    );
    let failing = Arc::new(watch::Failing::default());
    let cluster_wake =
        watch::wake_on_cluster(cluster_rx, works.clone(), failing.clone(), wake.clone());
    let work_feed = watch::feed(
        hub.clone(),
        works.clone(),
        index.clone(),
        interpreters.clone(),
        changed.clone(),
        wake,
    );
    let ctx = Arc::new(Context {
        hub: hub.clone(),
        shards,
        options,
        clusters,
        works,
        index,
        overrides,
        cluster_overrides,
        kinds: Mutex::new(HashMap::new()),
        interpreters: Interpreters::new(interpreters),
        changed,
        failing,
        settled: Settled::default(),
        rendered: Settled::default(),
        recorder: Recorder::new(
            hub.clone(),
            Reporter {
                controller: MANAGER.into(),
                instance: None,
            },
        ),
    });
    tokio::select! {
        _ = ri_feed => {},
        _ = op_feed => {},
        _ = cop_feed => {},
        _ = cluster_feed => {},
        _ = cluster_wake => {},
        _ = work_feed => {},
        _ = controller::<ResourceBinding>(ctx.clone(), &bindings, rb_rx) => {},
        _ = controller::<ClusterResourceBinding>(ctx, &bindings, crb_rx) => {},
    }
}

async fn controller<B: BindingObject>(
    ctx: Arc<Context>,
    bindings: &Bindings,
    works_changed: tokio::sync::mpsc::UnboundedReceiver<ObjectRef<Compact<B>>>,
) {
    let _ = ctx.clusters.wait_until_ready().await;
    ctx.works.ready().await;
    let _ = ctx.overrides.wait_until_ready().await;
    let _ = ctx.cluster_overrides.wait_until_ready().await;
    ctx.interpreters.ready().await;
    super::feed::shared_controller(bindings.of::<B>(), &ctx.shards)
        .reconcile_all_on(ctx.changed.stream())
        .reconcile_on(flotilla_watch::coalesce(works_changed, WORK_EVENTS_WINDOW))
        .run(reconcile::<B>, error_policy::<B>, ctx)
        .for_each(crate::metrics::count("binding"))
        .await;
}

fn error_policy<B: BindingObject>(b: Arc<Compact<B>>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(binding = %b.name_any(), namespace = ?b.namespace(), %error, "binding controller");
    Action::requeue(Duration::from_secs(5))
}

/// The Works of one binding, in whichever clusters' execution namespaces they are.
fn works_of(ctx: &Context, label: &str) -> Vec<Arc<Work>> {
    ctx.index.works(&ctx.works, label)
}

fn cluster_of(w: &Work) -> &str {
    w.metadata
        .namespace
        .as_deref()
        .and_then(flotilla_apis::names::cluster_of_execution_namespace)
        .unwrap_or_default()
}

async fn reconcile<B: BindingObject>(b: Arc<Compact<B>>, ctx: Arc<Context>) -> Result<Action> {
    let b = unpack(&b)?;
    let key = binding_key(b.scope_namespace(), &b.name_any());
    let shards = ctx.shards.clone();
    shards
        .reconcile(&key, reconcile_owned(b, ctx, key.clone()))
        .await
}

async fn reconcile_owned<B: BindingObject>(
    b: Arc<B>,
    ctx: Arc<Context>,
    key: String,
) -> Result<Action> {
    let name = b.name_any();
    let ns = b.scope_namespace().map(str::to_owned);
    let label = binding_label(ns.as_deref(), &name);
    let api = B::api(ctx.hub.clone(), ns.as_deref());
    // Read before the stores it covers.
    let epoch = ctx.changed.epoch();
    let works = works_of(&ctx, &label);
    if b.meta().deletion_timestamp.is_some() {
        ctx.settled.forget(&key);
        ctx.rendered.forget(&key);
        ctx.failing.set(ns.as_deref(), &name, false);
        return finish_deletion(&ctx.hub, &*b, &api, &works).await;
    }
    // Most binding events are status writes (this controller's own among them), which change
    // nothing that is rendered or summed.
    let inputs = Inputs::of(&*b, &works, epoch);
    if ctx
        .settled
        .settled(&key, &inputs, Timestamp::now())
        .is_some()
    {
        return Ok(Action::await_change());
    }
    if !b.finalizers().iter().any(|f| f == BINDING_FINALIZER) {
        // The update triggers the next round.
        return set_finalizer(&api, &*b, true).await;
    }
    let spec = b.spec();
    // Before anything is read: a binding reaches only what its scope allows.
    if let Some(why) = scope::refused_reference(ns.as_deref(), &spec.resource) {
        refuse(&ctx.hub, &*b, &works, &why).await?;
        return Ok(Action::await_change());
    }
    if !placed(spec, b.meta().generation, b.status()) {
        // The scheduler has not placed this version yet; its status write wakes us.
        return Ok(Action::await_change());
    }
    // A progressive rollout decides from the members' reports and the time: every reconcile
    // reads the template and steps.
    if let Some(strategy) = rollout::progressive(spec) {
        ctx.settled.forget(&key);
        ctx.rendered.forget(&key);
        return match fresh_template(&ctx, &*b, &works).await? {
            Some(t) => rollout::reconcile(&ctx, &*b, &api, &t, &works, strategy).await,
            None => Ok(Action::await_change()),
        };
    }
    rollout::forget(&*b, &api).await?;
    // A reconcile for its Works' status reports only: nothing to render, and of the template
    // only what summing them reads, as it was (with the status this controller wrote since).
    let render_inputs = Rendered {
        inputs: Inputs::rendered_of(&*b, &works, epoch),
        view: None,
    };
    let rendered = ctx
        .rendered
        .settled_with(&key, &render_inputs, Timestamp::now())
        .and_then(|r| r.view)
        .and_then(|text| serde_json::from_str(&text).ok().map(Arc::new));
    let template = match rendered.clone() {
        Some(t) => t,
        None => match fresh_template(&ctx, &*b, &works).await? {
            Some(t) => t,
            None => return Ok(Action::await_change()),
        },
    };
    let targets = targets(spec);
    let mut wrote = Wrote::default();
    let mut held = Vec::new();
    let wanted = shares(spec, &template);
    let live = live_works(&works);
    let progress = progress_by_cluster(&live);
    // What rendering will depend on once the watch shows this reconcile's writes: known when
    // they only rewrote the Works there are, so that their coming back is not taken for a
    // change (which would read the template and render once more).
    let mut rendered_after = None;
    if rendered.is_none() {
        let mut shares = wanted.clone();
        held = hold_shrinking(&mut shares, &current_replicas(&live), &progress);
        if !held.is_empty() {
            tracing::debug!(binding = %name, namespace = ?ns, ?held, "shrink held until the growing clusters are ready");
        }
        wrote = write_works(&ctx, &*b, &template, &targets, &shares, &works, None).await?;
        ctx.failing
            .set(ns.as_deref(), &name, !wrote.failures.is_empty());
        let leaving = leaving(&works, &targets, &spec.graceful_eviction_tasks);
        for w in &leaving {
            delete_work(&ctx.hub, w).await?;
        }
        if leaving.is_empty() {
            rendered_after = Inputs::rendered_after(&*b, &works, epoch, &wrote.hashes);
        }
    }
    let written = write_status(&ctx, &*b, &api, &template, &targets, &works, &wrote).await?;
    let failures = wrote.failures;
    if spec.graceful_eviction_tasks.is_empty() {
        // What was written here comes back as new inputs (Works, the binding's spec), except
        // the statuses, which this reconcile would write again just the same.
        if failures.is_empty() {
            ctx.settled.settle(key.clone(), inputs, None);
        }
        // Rendering depended on the Works' progress only while a shrink was held.
        if failures.is_empty() && held.is_empty() {
            let mut view = status_view(&template);
            if let Some(status) = written {
                view["status"] = status;
            }
            let rendered = Rendered {
                view: Some(view.to_string().into()),
                inputs: rendered_after.unwrap_or(render_inputs.inputs),
            };
            ctx.rendered.settle(key, rendered, None);
        }
        return Ok(Action::await_change());
    }
    let grace = ctx.options.eviction_timeout;
    end_tasks(&api, &*b, &targets, &wanted, &progress, grace).await
}

/// The binding's template read from the hub, if it is there, in reach, and the object the
/// binding was made for (else the binding is answered, or waits, and `None`).
async fn fresh_template<B: BindingObject>(
    ctx: &Context,
    b: &B,
    works: &[Arc<Work>],
) -> Result<Option<Arc<Value>>> {
    let spec = b.spec();
    let template = match template(ctx, b.scope_namespace(), spec).await? {
        Template::Found(t) => t,
        Template::Gone => return Ok(None),
        Template::Refused(why) => {
            refuse(&ctx.hub, b, works, &why).await?;
            return Ok(None);
        }
    };
    Ok(same_object(spec, &template).then(|| Arc::new(template)))
}

/// The Works not being deleted: one being deleted (its member was left, and may be down)
/// counts for nothing in what a binding's clusters run.
fn live_works(works: &[Arc<Work>]) -> Vec<Arc<Work>> {
    works
        .iter()
        .filter(|w| w.meta().deletion_timestamp.is_none())
        .cloned()
        .collect()
}

/// Each cluster's [`Progress`] with the object, from its (live) Work.
fn progress_by_cluster(live: &[Arc<Work>]) -> HashMap<String, Progress> {
    live.iter()
        .map(|w| (cluster_of(w).to_owned(), progress(manifest_status(w))))
        .collect()
}

/// Whether the scheduler has placed this `generation` of a binding (one without a placement,
/// attached to workloads, is not the scheduler's and counts as placed).
fn placed(
    spec: &ResourceBindingSpec,
    generation: Option<i64>,
    status: Option<&flotilla_apis::work::v1alpha1::ResourceBindingStatus>,
) -> bool {
    let observed = status.and_then(|s| s.scheduler_observed_generation);
    spec.placement.is_none() || observed == generation
}

/// Whether `template` is the object the binding was made for (not a re-created namesake,
/// whose own binding is on its way).
fn same_object(spec: &ResourceBindingSpec, template: &Value) -> bool {
    spec.resource.uid.is_none()
        || template["metadata"]["uid"].as_str() == spec.resource.uid.as_deref()
}

/// The status the member reported for a Work's (only) manifest.
fn manifest_status(w: &Work) -> Option<&ManifestStatus> {
    w.status.as_ref().and_then(|s| {
        s.manifest_statuses
            .iter()
            .find(|m| m.identifier.ordinal == 0)
    })
}

/// `spec.replicas` each cluster's Work asks for now.
fn current_replicas(works: &[Arc<Work>]) -> HashMap<String, u32> {
    works
        .iter()
        .filter_map(|w| {
            let n = w
                .spec
                .manifests
                .first()?
                .0
                .pointer("/spec/replicas")?
                .as_u64()?;
            Some((cluster_of(w).to_owned(), u32::try_from(n).ok()?))
        })
        .collect()
}

/// A Cluster as rendering and rollout groups read it: its name, labels and spec. Its status
/// (the member's APIs and resources, most of a Cluster) is not kept, a thousand times over.
fn labels_and_spec(cluster: &mut Cluster) {
    super::feed::lean(cluster);
    cluster.status = None;
}

#[cfg(test)]
mod tests;
