//! The binding controller: from a scheduled binding to one Work per cluster, and from the
//! Works' status back to the binding and the template.
//!
//! For a binding whose placement the scheduler has observed, it reads the template, renders
//! it per cluster ([`crate::render::render`]: hub fields stripped, the cluster's replica share,
//! the override rules that target the cluster) and server-side applies (manager
//! `flotilla-binding`) a Work named after the binding in the cluster's execution namespace.
//! Works of clusters the binding left are deleted. A Work is only written when what it would
//! say changed (a hash in the annotation `work.flotilla.io/render-hash`).
//!
//! Status flows back the same way: every change of one of its Works reconciles the binding,
//! which then writes per-cluster status and `FullyApplied` into the binding, and the members'
//! statuses summed ([`aggregate`]) into the template's status, so `kubectl get` and
//! `kubectl rollout status` on the hub tell the truth about the fleet.
//!
//! Reach: a ResourceBinding propagates only objects of its own namespace, and every manifest
//! of its Works stays there after overrides; nothing of the hub's own is propagated. A binding
//! out of its reach gets no Works ([`super::scope`]).
//!
//! Deletion: the binding carries the finalizer `work.flotilla.io/binding-cleanup`; when the
//! template goes (the hub's garbage collector deletes the binding it owns), the binding's
//! Works are deleted, which removes the objects from the members, unless the template was
//! annotated `propagation.flotilla.io/orphan: "true"` (then the Works say `deletePolicy:
//! Orphan` and the member copies stay).

pub mod aggregate;
pub mod eviction;
pub mod shares;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::Cluster;
use flotilla_apis::conditions::{self, Set};
use flotilla_apis::names::execution_namespace;
use flotilla_apis::policy::v1alpha1::{ClusterOverridePolicy, ConflictResolution, OverridePolicy};
use flotilla_apis::work::v1alpha1::{
    AggregatedStatusItem, ClusterResourceBinding, ResourceBinding, Work, CONDITION_FULLY_APPLIED,
    REASON_FULLY_APPLIED, REASON_NOT_FULLY_APPLIED,
};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Resource, ResourceExt};
use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::sync::broadcast;
use tokio_stream::wrappers::BroadcastStream;

use self::aggregate::Member;
use self::eviction::{hold_shrinking, pending_tasks, progress, replacement_ready, Progress};
use self::shares::shares;
use super::binding::{
    BindingObject, BINDING_FINALIZER, BINDING_LABEL, BINDING_NAMESPACE_ANNOTATION,
    BINDING_NAME_ANNOTATION, ORPHAN_ANNOTATION,
};
use super::feed::{feed, feed_on_change};
use super::scope;
use super::select::{best_match, Subject};
use super::workload::{binding_label, discover, dynamic_api, fnv64, work_name};
use crate::render::{render, rules_for_cluster, MatchedPolicy, ReplicaShare};
use crate::{Error, Result};

/// Field manager of the binding controller's writes.
pub const MANAGER: &str = "flotilla-binding";
/// Annotation on a Work: the hash of what the binding controller last wrote.
pub const RENDER_HASH_ANNOTATION: &str = "work.flotilla.io/render-hash";

/// Options of the binding controller.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// How long the copy in a cluster failover left is kept, at most, for its replacement to
    /// come up, when its eviction task names no grace period
    /// (`serve --graceful-eviction-timeout`).
    pub eviction_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            eviction_timeout: Duration::from_secs(600),
        }
    }
}

struct Context {
    hub: Client,
    options: Options,
    clusters: Store<Cluster>,
    works: Store<Work>,
    overrides: Store<OverridePolicy>,
    cluster_overrides: Store<ClusterOverridePolicy>,
    kinds: Mutex<HashMap<(String, String), (ApiResource, bool)>>,
}

/// Runs until dropped.
pub async fn run(hub: Client, options: Options) {
    let (clusters, cluster_writer) = reflector::store();
    let (works, work_writer) = reflector::store();
    let (overrides, op_writer) = reflector::store();
    let (cluster_overrides, cop_writer) = reflector::store();
    let (changed, _) = broadcast::channel::<()>(64);
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
    // Overrides select clusters by name, labels and topology.
    let cluster_feed = feed_on_change(
        Api::<Cluster>::all(hub.clone()),
        cluster_writer,
        changed.clone(),
        |c: &Cluster| fnv64(json!([c.metadata.labels, c.spec]).to_string().as_bytes()),
    );
    let (rb_tx, rb_rx) = tokio::sync::mpsc::unbounded_channel();
    let (crb_tx, crb_rx) = tokio::sync::mpsc::unbounded_channel();
    let work_feed = watcher(
        Api::<Work>::all(hub.clone()),
        watcher::Config::default().labels(BINDING_LABEL),
    )
    .default_backoff()
    .modify(super::feed::lean::<Work>)
    .reflect(work_writer)
    .for_each(move |event| {
        if let Ok(
            watcher::Event::Apply(w) | watcher::Event::Delete(w) | watcher::Event::InitApply(w),
        ) = event
        {
            let a = w.annotations();
            if let Some(name) = a.get(BINDING_NAME_ANNOTATION) {
                match a.get(BINDING_NAMESPACE_ANNOTATION) {
                    Some(ns) => {
                        let _ = rb_tx.send(ObjectRef::<ResourceBinding>::new(name).within(ns));
                    }
                    None => {
                        let _ = crb_tx.send(ObjectRef::<ClusterResourceBinding>::new(name));
                    }
                }
            }
        }
        futures::future::ready(())
    });
    let ctx = Arc::new(Context {
        hub: hub.clone(),
        options,
        clusters,
        works,
        overrides,
        cluster_overrides,
        kinds: Mutex::new(HashMap::new()),
    });
    tokio::select! {
        _ = op_feed => {},
        _ = cop_feed => {},
        _ = cluster_feed => {},
        _ = work_feed => {},
        _ = controller::<ResourceBinding>(ctx.clone(), changed.subscribe(), rb_rx) => {},
        _ = controller::<ClusterResourceBinding>(ctx, changed.subscribe(), crb_rx) => {},
    }
}

async fn controller<B: BindingObject>(
    ctx: Arc<Context>,
    changed: broadcast::Receiver<()>,
    works_changed: tokio::sync::mpsc::UnboundedReceiver<ObjectRef<B>>,
) {
    let _ = ctx.clusters.wait_until_ready().await;
    let _ = ctx.works.wait_until_ready().await;
    let _ = ctx.overrides.wait_until_ready().await;
    let _ = ctx.cluster_overrides.wait_until_ready().await;
    super::feed::controller(Api::<B>::all(ctx.hub.clone()))
        .reconcile_all_on(BroadcastStream::new(changed).map(|_| ()))
        .reconcile_on(tokio_stream::wrappers::UnboundedReceiverStream::new(
            works_changed,
        ))
        .run(reconcile::<B>, error_policy::<B>, ctx)
        .for_each(crate::metrics::count("binding"))
        .await;
}

fn error_policy<B: BindingObject>(b: Arc<B>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(binding = %b.name_any(), namespace = ?b.namespace(), %error, "binding controller");
    Action::requeue(Duration::from_secs(5))
}

/// The Works of one binding: its Work, looked up by name, in each registered cluster's
/// execution namespace (a lookup per cluster, not a scan of every Work on the hub).
fn works_of(ctx: &Context, ns: Option<&str>, binding: &str, label: &str) -> Vec<Arc<Work>> {
    let name = work_name(ns, binding);
    ctx.clusters
        .state()
        .iter()
        .filter_map(|c| {
            let es = execution_namespace(&c.name_any());
            ctx.works.get(&ObjectRef::new(&name).within(&es))
        })
        .filter(|w| w.labels().get(BINDING_LABEL).map(String::as_str) == Some(label))
        .collect()
}

fn cluster_of(w: &Work) -> &str {
    w.metadata
        .namespace
        .as_deref()
        .and_then(flotilla_apis::names::cluster_of_execution_namespace)
        .unwrap_or_default()
}

async fn reconcile<B: BindingObject>(b: Arc<B>, ctx: Arc<Context>) -> Result<Action> {
    let name = b.name_any();
    let ns = b.scope_namespace().map(str::to_owned);
    let label = binding_label(ns.as_deref(), &name);
    let api = B::api(ctx.hub.clone(), ns.as_deref());
    let works = works_of(&ctx, ns.as_deref(), &name, &label);
    if b.meta().deletion_timestamp.is_some() {
        return finish_deletion(&ctx, &*b, &api, &works).await;
    }
    if !b.finalizers().iter().any(|f| f == BINDING_FINALIZER) {
        // The update triggers the next round.
        return set_finalizer(&api, &*b, true).await;
    }
    let spec = b.spec();
    // Before anything is read: a binding reaches only what its scope allows.
    if let Some(why) = scope::refused_reference(ns.as_deref(), &spec.resource) {
        scope::refuse(&ctx.hub, &*b, &works, &why, MANAGER).await?;
        return Ok(Action::await_change());
    }
    let generation = b.meta().generation;
    let observed = b.status().and_then(|s| s.scheduler_observed_generation);
    if spec.placement.is_some() && observed != generation {
        // The scheduler has not placed this version yet; its status write wakes us.
        return Ok(Action::await_change());
    }
    let template = match template(&ctx, ns.as_deref(), spec).await? {
        Template::Found(t) => t,
        Template::Gone => return Ok(Action::await_change()),
        Template::Refused(why) => {
            scope::refuse(&ctx.hub, &*b, &works, &why, MANAGER).await?;
            return Ok(Action::await_change());
        }
    };
    if spec.resource.uid.is_some()
        && template["metadata"]["uid"].as_str() != spec.resource.uid.as_deref()
    {
        return Ok(Action::await_change());
    }
    let targets = targets(&*b);
    let wanted = shares(spec, &template);
    // A Work being deleted (its member was left, and may be down) counts for nothing here.
    let live: Vec<Arc<Work>> = works
        .iter()
        .filter(|w| w.meta().deletion_timestamp.is_none())
        .cloned()
        .collect();
    let progress: HashMap<String, Progress> = live
        .iter()
        .map(|w| (cluster_of(w).to_owned(), progress(manifest_status(w))))
        .collect();
    let mut shares = wanted.clone();
    let held = hold_shrinking(&mut shares, &current_replicas(&live), &progress);
    if !held.is_empty() {
        tracing::debug!(binding = %name, namespace = ?ns, ?held, "shrink held until the growing clusters are ready");
    }
    let orphan = b.annotations().get(ORPHAN_ANNOTATION).map(String::as_str) == Some("true");
    let mut failures: HashMap<String, String> = HashMap::new();
    let overrides = matched_overrides(&ctx, &template);
    let matched: Vec<MatchedPolicy<'_>> = overrides.iter().map(Overrides::matched).collect();
    for cluster_name in &targets {
        let Some(cluster) = ctx.clusters.get(&ObjectRef::new(cluster_name)) else {
            failures.insert(cluster_name.clone(), "the cluster is not registered".into());
            continue;
        };
        let rules = rules_for_cluster(&matched, &cluster);
        let manifest = match render(
            &template,
            &cluster,
            shares.get(cluster_name).copied(),
            &rules,
        ) {
            Ok(m) => m,
            Err(e) => {
                failures.insert(cluster_name.clone(), e.to_string());
                continue;
            }
        };
        if let Some(why) = scope::refused_manifest(ns.as_deref(), &manifest) {
            failures.insert(cluster_name.clone(), why);
            continue;
        }
        let body = work_body(
            ns.as_deref(),
            &name,
            &label,
            cluster_name,
            manifest,
            spec.conflict_resolution,
            orphan,
        );
        let hash = body["metadata"]["annotations"][RENDER_HASH_ANNOTATION]
            .as_str()
            .unwrap_or_default();
        let wname = body["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let current = works
            .iter()
            .find(|w| cluster_of(w) == cluster_name.as_str());
        let fresh = current.is_some_and(|w| {
            w.annotations()
                .get(RENDER_HASH_ANNOTATION)
                .map(String::as_str)
                == Some(hash)
        });
        if !fresh {
            let es = execution_namespace(cluster_name);
            Api::<Work>::namespaced(ctx.hub.clone(), &es)
                .patch(
                    &wname,
                    &PatchParams::apply(MANAGER).force(),
                    &Patch::Apply(&body),
                )
                .await
                .map_err(Error::hub(format!("apply Work {es}/{wname}")))?;
        }
    }
    let keep: BTreeSet<&str> = targets
        .iter()
        .map(String::as_str)
        .chain(
            spec.graceful_eviction_tasks
                .iter()
                .map(|t| t.from_cluster.as_str()),
        )
        .collect();
    for w in &works {
        if !keep.contains(cluster_of(w)) && w.meta().deletion_timestamp.is_none() {
            delete_work(&ctx.hub, w).await?;
        }
    }
    write_status(&ctx, &*b, &api, &template, &targets, &works, &failures).await?;
    if spec.graceful_eviction_tasks.is_empty() {
        return Ok(Action::await_change());
    }
    let up: Vec<(Progress, Option<u32>)> = targets
        .iter()
        .map(|c| {
            let want = match wanted.get(c) {
                Some(ReplicaShare::Replicas(n)) => Some(*n),
                Some(_) => None,
                None => u32::try_from(spec.replicas).ok(),
            };
            (progress.get(c).copied().unwrap_or_default(), want)
        })
        .collect();
    let now = Timestamp::now();
    let (keep, next) = pending_tasks(
        &spec.graceful_eviction_tasks,
        &targets,
        replacement_ready(&up),
        now,
        ctx.options.eviction_timeout,
    );
    if keep != spec.graceful_eviction_tasks {
        tracing::info!(binding = %name, namespace = ?ns, kept = keep.len(), "graceful eviction done");
        let patch = json!({
            "metadata": {"resourceVersion": b.resource_version()},
            // null, not []: no tasks left reads as no field.
            "spec": {"gracefulEvictionTasks": (!keep.is_empty()).then_some(&keep)},
        });
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            // The binding's update brings the next round, which deletes the Work.
            Ok(_) => {
                let ended = spec
                    .graceful_eviction_tasks
                    .len()
                    .saturating_sub(keep.len());
                crate::metrics::metrics()
                    .graceful_evictions_ended
                    .inc_by(u64::try_from(ended).unwrap_or(0));
            }
            // Changed meanwhile: that change brings the next round.
            Err(kube::Error::Api(s)) if s.code == 409 || s.code == 404 => {}
            Err(e) => {
                return Err(Error::hub(format!("end the evictions of binding {name}"))(
                    e,
                ));
            }
        }
    }
    Ok(match next {
        Some(t) => Action::requeue(
            Duration::from_secs_f64(t.duration_since(now).as_secs_f64().max(0.0))
                + Duration::from_millis(200),
        ),
        None => Action::await_change(),
    })
}

/// The status the member reported for a Work's (only) manifest.
fn manifest_status(w: &Work) -> Option<&flotilla_apis::work::v1alpha1::ManifestStatus> {
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

/// The clusters a binding's template goes to: the scheduler's choice, and for a dependency
/// the clusters of the workloads it follows (an attached binding has no placement of its own;
/// an object a policy selects and a workload needs goes to both).
fn targets<B: BindingObject>(b: &B) -> Vec<String> {
    let spec = b.spec();
    let own = spec.placement.iter().flat_map(|_| &spec.clusters);
    let set: BTreeSet<String> = own
        .chain(spec.required_by.iter().flat_map(|r| &r.clusters))
        .map(|t| t.name.clone())
        .collect();
    set.into_iter().collect()
}

/// Deletes Work `w` (gone already counts as done).
pub(super) async fn delete_work(hub: &Client, w: &Work) -> Result<()> {
    let ns = w.namespace().unwrap_or_default();
    let name = w.name_any();
    match Api::<Work>::namespaced(hub.clone(), &ns)
        .delete(&name, &DeleteParams::background())
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(Error::hub(format!("delete Work {ns}/{name}"))(e)),
    }
}

async fn finish_deletion<B: BindingObject>(
    ctx: &Context,
    b: &B,
    api: &Api<B>,
    works: &[Arc<Work>],
) -> Result<Action> {
    for w in works {
        if w.meta().deletion_timestamp.is_none() {
            delete_work(&ctx.hub, w).await?;
        }
    }
    set_finalizer(api, b, false).await
}

/// Adds (`on`) or removes the cleanup finalizer. Other writers (the detector and scheduler on
/// a new binding, the garbage collector or a namespace deletion on one being deleted) often
/// change the binding meanwhile: on a conflict it is read again and the write retried, rather
/// than waiting for a requeue.
async fn set_finalizer<B: BindingObject>(api: &Api<B>, b: &B, on: bool) -> Result<Action> {
    let name = b.name_any();
    let mut current: Option<B> = None;
    for _ in 0..4 {
        let now = current.as_ref().unwrap_or(b);
        if on == now.finalizers().iter().any(|f| f == BINDING_FINALIZER) {
            return Ok(Action::await_change());
        }
        let mut finalizers: Vec<String> = now
            .finalizers()
            .iter()
            .filter(|f| *f != BINDING_FINALIZER)
            .cloned()
            .collect();
        if on {
            finalizers.push(BINDING_FINALIZER.to_owned());
        }
        let patch = json!({
            "metadata": {"finalizers": finalizers, "resourceVersion": now.resource_version()},
        });
        match api
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(Action::await_change()),
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(Action::await_change()),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                match api
                    .get_opt(&name)
                    .await
                    .map_err(Error::hub(format!("read binding {name}")))?
                {
                    Some(fresh) => current = Some(fresh),
                    None => return Ok(Action::await_change()),
                }
            }
            Err(e) => {
                return Err(Error::hub(format!("set the finalizers of binding {name}"))(
                    e,
                ))
            }
        }
    }
    // Still contended: try again shortly.
    Ok(Action::requeue(Duration::from_millis(500)))
}

/// The Work for one cluster, with the hash of its content in an annotation.
fn work_body(
    ns: Option<&str>,
    binding: &str,
    label: &str,
    cluster: &str,
    manifest: Value,
    conflict: ConflictResolution,
    orphan: bool,
) -> Value {
    let conflict = flotilla_apis::work::v1alpha1::ConflictPolicy::from(conflict);
    let mut annotations = serde_json::Map::new();
    annotations.insert(BINDING_NAME_ANNOTATION.into(), json!(binding));
    if let Some(ns) = ns {
        annotations.insert(BINDING_NAMESPACE_ANNOTATION.into(), json!(ns));
    }
    let mut body = json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": "Work",
        "metadata": {
            "name": work_name(ns, binding),
            "namespace": execution_namespace(cluster),
            "labels": {BINDING_LABEL: label},
            "annotations": annotations,
        },
        "spec": {
            "manifests": [manifest],
            "conflictPolicy": conflict,
            "deletePolicy": if orphan { "Orphan" } else { "Delete" },
        },
    });
    let hash = format!("{:016x}", fnv64(body.to_string().as_bytes()));
    body["metadata"]["annotations"][RENDER_HASH_ANNOTATION] = json!(hash);
    body
}

/// Override policies that select a template, kept alive for rendering.
enum Overrides {
    Namespaced(Arc<OverridePolicy>),
    Cluster(Arc<ClusterOverridePolicy>),
}

impl Overrides {
    fn matched(&self) -> MatchedPolicy<'_> {
        match self {
            Self::Namespaced(p) => MatchedPolicy::from(&**p),
            Self::Cluster(p) => MatchedPolicy::from(&**p),
        }
    }
}

/// The override policies whose `resourceSelectors` select the template (an empty list selects
/// everything in the policy's reach); an OverridePolicy only reaches its own namespace.
fn matched_overrides(ctx: &Context, template: &Value) -> Vec<Overrides> {
    let meta = &template["metadata"];
    let labels = serde_json::from_value(meta["labels"].clone()).unwrap_or_default();
    let subject = Subject {
        api_version: template["apiVersion"].as_str().unwrap_or_default(),
        kind: template["kind"].as_str().unwrap_or_default(),
        namespace: meta["namespace"].as_str(),
        name: meta["name"].as_str().unwrap_or_default(),
        labels: &labels,
    };
    let selects = |selectors: &[flotilla_apis::policy::v1alpha1::ResourceSelector]| {
        selectors.is_empty() || best_match(selectors, &subject).is_some()
    };
    let mut out: Vec<Overrides> = ctx
        .overrides
        .state()
        .into_iter()
        .filter(|p| subject.namespace.is_some() && p.namespace().as_deref() == subject.namespace)
        .filter(|p| selects(&p.spec.resource_selectors))
        .map(Overrides::Namespaced)
        .collect();
    out.extend(
        ctx.cluster_overrides
            .state()
            .into_iter()
            .filter(|p| selects(&p.spec.resource_selectors))
            .map(Overrides::Cluster),
    );
    out
}

/// A binding's template, as [`template`] found it.
enum Template {
    Found(Value),
    Gone,
    /// Its kind is out of the binding's reach (why).
    Refused(String),
}

/// The template of a binding in namespace `ns`, fetched from the hub; not read at all when
/// its kind is out of the binding's reach.
async fn template(
    ctx: &Context,
    ns: Option<&str>,
    spec: &flotilla_apis::work::v1alpha1::ResourceBindingSpec,
) -> Result<Template> {
    let r = &spec.resource;
    let key = (r.api_version.clone(), r.kind.clone());
    let known = ctx.kinds.lock().get(&key).cloned();
    let (resource, namespaced) = match known {
        Some(k) => k,
        None => {
            let k = discover(&ctx.hub, &r.api_version, &r.kind)
                .await
                .map_err(Error::hub(format!("discover {} {}", r.api_version, r.kind)))?;
            ctx.kinds.lock().insert(key, k.clone());
            k
        }
    };
    if let Some(why) = scope::refused_kind(ns, &r.kind, namespaced) {
        return Ok(Template::Refused(why));
    }
    let api = dynamic_api(
        ctx.hub.clone(),
        &resource,
        namespaced,
        r.namespace.as_deref(),
    );
    let obj = api
        .get_opt(&r.name)
        .await
        .map_err(Error::hub(format!("read {} {}", r.kind, r.name)))?;
    Ok(obj.map_or(Template::Gone, |o| {
        let mut v = serde_json::to_value(o).unwrap_or_default();
        v["apiVersion"] = json!(resource.api_version);
        v["kind"] = json!(resource.kind);
        Template::Found(v)
    }))
}

/// Per-cluster status and `FullyApplied` into the binding; the members' statuses summed into
/// the template's.
async fn write_status<B: BindingObject>(
    ctx: &Context,
    b: &B,
    api: &Api<B>,
    template: &Value,
    targets: &[String],
    works: &[Arc<Work>],
    failures: &HashMap<String, String>,
) -> Result<()> {
    let mut items: Vec<AggregatedStatusItem> = Vec::new();
    let mut members: Vec<(String, Option<Value>, bool)> = Vec::new();
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
        items.push(aggregate::item(cluster, manifest));
        let work_observed = work.is_some_and(|w| {
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
            manifest.and_then(aggregate::member_status),
            work_observed && member_observed,
        ));
    }
    let all_applied = !items.is_empty() && items.iter().all(|i| i.applied);
    let now = Timestamp::now();
    let mut conds = b.status().map(|s| s.conditions.clone()).unwrap_or_default();
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
    let before = b
        .status()
        .map(|s| s.aggregated_status.clone())
        .unwrap_or_default();
    if changed || before != items {
        let fully = conds
            .iter()
            .find(|c| c.type_ == CONDITION_FULLY_APPLIED)
            .cloned();
        let mut body = json!({
            "apiVersion": "work.flotilla.io/v1alpha1",
            "kind": B::kind(&()),
            "metadata": {"name": b.name_any()},
            "status": {"aggregatedStatus": items, "conditions": [fully]},
        });
        if let Some(ns) = b.scope_namespace() {
            body["metadata"]["namespace"] = json!(ns);
        }
        api.patch_status(
            &b.name_any(),
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .map_err(Error::hub(format!(
            "write the status of binding {}",
            b.name_any()
        )))?;
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
    if let Some(status) = aggregate::aggregate(template, &view, &stamp) {
        if template.get("status") != Some(&status) {
            write_template_status(ctx, b, status).await?;
        }
    }
    Ok(())
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
    let patch: json_patch::Patch =
        serde_json::from_value(json!([{"op": "add", "path": "/status", "value": status}]))
            .map_err(|e| Error::Invalid(format!("status patch: {e}")))?;
    match api
        .patch_status(&r.name, &PatchParams::default(), &Patch::<()>::Json(patch))
        .await
    {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
        Err(e) => Err(Error::hub(format!(
            "write the status of {} {}",
            r.kind, r.name
        ))(e)),
    }
}
