//! The scheduler controller: places bindings with [`flotilla_scheduler::schedule`].
//!
//! A binding is scheduled when its generation moves (the detector changed its placement or
//! replicas) and looked at again when a Cluster changes in a way that matters to placement
//! (labels, taints, readiness, API enablements, topology, capacity) — a new cluster, every
//! binding; a registered one, the bindings it concerns ([`interest`]) — or when a `NoExecute`
//! toleration window runs out. Scheduling keeps the current placement where it is still
//! feasible, so a cluster joining or leaving does not reshuffle running workloads; a cluster
//! whose `NoExecute` taint is no longer tolerated loses its share (failover).
//!
//! A change of the placement itself (the policy was edited) divides the replicas afresh instead:
//! the placement the binding was last scheduled under is remembered as a hash in the
//! [`PLACEMENT_HASH_ANNOTATION`], so going back to an earlier placement (A → B → A) is seen as
//! the change it is, and weights that changed on clusters the workload keeps take effect.
//!
//! The decision is written as `spec.clusters` (a merge patch, only when it changes), then the
//! status (server-side apply, manager `flotilla-scheduler`): `schedulerObservedGeneration`,
//! `Scheduled`, `lastScheduledTime`, and the `clusterAffinities` group used. Bindings without a
//! placement (dependencies that follow a workload) are not the scheduler's.
//!
//! This file wires the controller and orders the reconcile's steps; what to write given what
//! was read (the rebalance, the spec and status writes, eviction tasks, the clusters failed
//! over from) are functions of plain values in `plan`.

mod inputs;
mod interest;
mod plan;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::{bound_sets, Cluster, ClusterSet, ClusterSetBinding};
use flotilla_apis::conditions;
use flotilla_apis::quantity;
use flotilla_apis::work::v1alpha1::{ClusterResourceBinding, ResourceBinding, ResourceBindingSpec};
use flotilla_scheduler::failover::{self, Failback};
use flotilla_scheduler::{filter, schedule, Eviction, Request};
use flotilla_watch::Compact;
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use self::inputs::Inputs;
use self::interest::Interest;
use self::plan::{
    failed_over, placement_hash, placement_patch, rebalance, spec_write, status_write,
};
use super::binding::{apply_status, unpack, BindingObject, Bindings, Wake};
use super::feed::{feed_on_change, requeue_at, Changes, Seen};
use super::settled::Settled;
use super::workload::fnv64;
use crate::shards::{binding_key, Shards};
use crate::{Error, Result};

/// `reason` of the eviction tasks failover makes.
pub const REASON_TAINT_UNTOLERATED: &str = "TaintUntolerated";

/// Annotation on a binding: the hash of the placement its `spec.clusters` were decided under.
pub const PLACEMENT_HASH_ANNOTATION: &str = "work.flotilla.io/scheduled-placement";

/// Field manager of the scheduler's status writes.
pub const MANAGER: &str = "flotilla-scheduler";

/// Scheduler settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// How long a `NoExecute` taint no `clusterToleration` names is tolerated before the
    /// workloads move away (`serve --failover-toleration`).
    pub failover_toleration: Duration,
    /// How long a cluster failover left must be Ready before workloads return to it
    /// (`serve --failback-after`); `None`: never.
    pub failback_after: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            failover_toleration: Duration::from_secs(60),
            failback_after: Some(Duration::from_secs(300)),
        }
    }
}

struct Context {
    hub: Client,
    shards: Shards,
    clusters: Store<Cluster>,
    /// Which namespaces may place onto which ClusterSets.
    cluster_sets: Store<ClusterSet>,
    set_bindings: Store<ClusterSetBinding>,
    /// Told when a cluster joins, or the ClusterSets or their bindings change: everything is
    /// scheduled again. A registered cluster's change is counted by `interest`.
    changed: Changes,
    /// Each binding's last decision with nothing to write, and its inputs.
    memo: Settled<Inputs>,
    /// Which bindings a change of each cluster concerns.
    interest: Arc<Interest>,
    options: Options,
}

/// Runs until dropped, for the bindings in the shards `shards` owns.
pub async fn run(hub: Client, options: Options, shards: Shards, bindings: Bindings) {
    let (clusters, writer) = reflector::store();
    let (cluster_sets, sets_writer) = reflector::store();
    let (set_bindings, bindings_writer) = reflector::store();
    let changed = Changes::default();
    // A new cluster is a candidate for any binding; a registered one that changed concerns
    // the bindings `Interest` says (woken by `wake_concerned`), not every binding.
    let (cluster_tx, cluster_rx) = tokio::sync::mpsc::unbounded_channel();
    let interest = Arc::new(Interest::default());
    let feed = feed_on_change(
        Api::<Cluster>::all(hub.clone()),
        writer,
        {
            let (changed, interest) = (changed.clone(), interest.clone());
            move |seen| match seen {
                Seen::New(_) => changed.notify(),
                Seen::Changed(name) => {
                    interest.changed(name);
                    let _ = cluster_tx.send(name.to_owned());
                }
            }
        },
        placement_digest,
        super::feed::lean::<Cluster>,
    );
    // A set bound or unbound re-examines every binding.
    let sets_feed = super::feed::feed(
        Api::<ClusterSet>::all(hub.clone()),
        sets_writer,
        Some(changed.clone()),
    );
    let bindings_feed = super::feed::feed(
        Api::<ClusterSetBinding>::all(hub.clone()),
        bindings_writer,
        Some(changed.clone()),
    );
    let ctx = Arc::new(Context {
        hub: hub.clone(),
        shards,
        clusters,
        cluster_sets,
        set_bindings,
        changed: changed.clone(),
        memo: Settled::default(),
        interest,
        options,
    });
    let (wake, (rb_rx, crb_rx)) = Wake::new();
    tokio::select! {
        _ = feed => {},
        _ = sets_feed => {},
        _ = bindings_feed => {},
        _ = wake_concerned(cluster_rx, ctx.clone(), wake) => {},
        _ = scheduler::<ResourceBinding>(ctx.clone(), &bindings, rb_rx) => {},
        _ = scheduler::<ClusterResourceBinding>(ctx, &bindings, crb_rx) => {},
    }
}

/// Wakes, for each cluster name `changed` sends, the bindings its change concerns. Runs until
/// the sender is gone.
async fn wake_concerned(mut changed: UnboundedReceiver<String>, ctx: Arc<Context>, wake: Wake) {
    while let Some(cluster) = changed.recv().await {
        let concerned = ctx.interest.concerned(&cluster);
        tracing::debug!(%cluster, bindings = concerned.len(), "a cluster changed: scheduling the bindings it concerns");
        for b in &concerned {
            wake.to(b);
        }
    }
}

/// What of a Cluster placement depends on; a change re-examines every binding. Deleted
/// clusters need no trigger: bindings keep running where they are until told otherwise.
fn placement_digest(c: &Cluster) -> u64 {
    let status = c.status.as_ref();
    let ready = status
        .and_then(|s| conditions::find(&s.conditions, "Ready"))
        .map(|c| c.status.clone());
    let v = json!({
        "labels": c.metadata.labels,
        "spec": c.spec,
        "ready": ready,
        "apis": status.map(|s| &s.api_enablements),
        "resources": status.map(|s| &s.resource_summary),
    });
    fnv64(v.to_string().as_bytes())
}

async fn scheduler<B: BindingObject>(
    ctx: Arc<Context>,
    bindings: &Bindings,
    woken: UnboundedReceiver<ObjectRef<Compact<B>>>,
) {
    // Every store whole before the first decision: an empty set store would refuse every
    // cluster to every namespace, and move running workloads away.
    let _ = ctx.clusters.wait_until_ready().await;
    let _ = ctx.cluster_sets.wait_until_ready().await;
    let _ = ctx.set_bindings.wait_until_ready().await;
    super::feed::shared_controller(bindings.of::<B>(), &ctx.shards)
        .reconcile_all_on(ctx.changed.stream())
        .reconcile_on(tokio_stream::wrappers::UnboundedReceiverStream::new(woken))
        .run(reconcile::<B>, error_policy::<B>, ctx)
        .for_each(crate::metrics::count("scheduler"))
        .await;
}

fn error_policy<B: BindingObject>(b: Arc<Compact<B>>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(binding = %b.name_any(), namespace = ?b.namespace(), %error, "scheduler");
    Action::requeue(Duration::from_secs(5))
}

/// The scheduler's request for a binding.
pub fn request<'a>(
    spec: &'a ResourceBindingSpec,
    eviction: Option<Eviction>,
) -> Option<Request<'a>> {
    let placement = spec.placement.as_ref()?;
    let api_version = spec.resource.api_version.as_str();
    let (group, version) = super::workload::split_api_version(api_version);
    let replica_request: BTreeMap<String, i64> = spec
        .replica_requirements
        .iter()
        .flat_map(|r| r.resource_request.iter())
        .filter_map(|(k, q)| Some((k.clone(), quantity::millis(q)?)))
        .collect();
    let with_replicas = super::workload::binding_has_replicas(spec);
    Some(Request {
        placement,
        gvk: (group, version, spec.resource.kind.as_str()),
        replicas: with_replicas.then(|| u32::try_from(spec.replicas.max(0)).unwrap_or(0)),
        replica_request,
        current: spec
            .clusters
            .iter()
            .map(|t| {
                (
                    t.name.clone(),
                    u32::try_from(t.replicas.max(0)).unwrap_or(0),
                )
            })
            .collect(),
        rebalance: false,
        eviction,
        cluster_sets: None,
    })
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
    let id = (b.scope_namespace().map(str::to_owned), b.name_any());
    if b.meta().deletion_timestamp.is_some() {
        ctx.memo.forget(&key);
        ctx.interest.record(id, None);
        return Ok(Action::await_change());
    }
    // Read before the stores they cover.
    let epochs = (ctx.changed.epoch(), ctx.interest.record(id, Some(b.spec())));
    let eviction = Eviction {
        now: Timestamp::now(),
        default_toleration: ctx.options.failover_toleration,
    };
    // Most binding events are other controllers' status writes: nothing placement depends on.
    let inputs = Inputs::of(&*b, epochs);
    if let Some(wake) = ctx.memo.settled(&key, &inputs, eviction.now) {
        return Ok(requeue_at(wake, eviction.now));
    }
    let Some(mut req) = request(b.spec(), Some(eviction)) else {
        return Ok(Action::await_change());
    };
    // A namespace's bindings place onto the ClusterSets bound there only.
    let sets = b.scope_namespace().map(|ns| {
        let (bindings, sets) = (ctx.set_bindings.state(), ctx.cluster_sets.state());
        bound_sets(ns, bindings.iter().map(|b| &**b), sets.iter().map(|s| &**s))
    });
    req.cluster_sets = sets.as_ref();
    let placement_hash = placement_hash(b.spec());
    let last_placement = b.annotations().get(PLACEMENT_HASH_ANNOTATION).cloned();
    req.rebalance = rebalance(last_placement.as_deref(), &placement_hash);
    let clusters = ctx.clusters.state();
    let mut decision = schedule(&req, &clusters);
    // Look again when a running toleration window ends.
    let mut wake = req
        .current
        .iter()
        .filter_map(|(name, _)| clusters.iter().find(|c| c.name_any() == *name))
        .filter_map(|c| filter::next_eviction(&req.placement.cluster_tolerations, c, eviction))
        .min();
    let name = b.name_any();
    let ns = b.scope_namespace().map(str::to_owned);
    let evicted = failover::evicted(&req, &decision, &clusters, eviction);
    let failed_over_before = b
        .status()
        .map(|s| s.failed_over.clone())
        .unwrap_or_default();
    if let Some(stable) = ctx.options.failback_after {
        let from: Vec<&str> = failed_over_before.iter().map(|f| f.name.as_str()).collect();
        match failover::failback(&req, &decision, &clusters, &from, stable, eviction.now) {
            Failback::Now(fresh, back) => {
                tracing::info!(binding = %name, namespace = ?ns, clusters = ?back, "failback");
                crate::metrics::metrics().failbacks.inc();
                decision = fresh;
            }
            Failback::At(t) => wake = Some(wake.map_or(t, |w| w.min(t))),
            Failback::None => {}
        }
    }
    let registered: Vec<String> = clusters.iter().map(|c| c.name_any()).collect();
    let failed_over = failed_over(
        &failed_over_before,
        &registered,
        &decision,
        &evicted,
        &b.spec().graceful_eviction_tasks,
        eviction.now,
    );
    let api = B::api(ctx.hub.clone(), ns.as_deref());
    let mut generation = b.meta().generation.unwrap_or(0);
    let write = spec_write(
        b.spec(),
        &decision,
        &evicted,
        eviction.now,
        last_placement.as_deref(),
        &placement_hash,
    );
    let spec_unchanged = write.is_none();
    if let Some(write) = write {
        if write.moved {
            tracing::info!(binding = %name, namespace = ?ns, clusters = ?write.chosen, evicted = ?evicted, rebalance = req.rebalance, "scheduled");
        }
        let patch = placement_patch(
            generation,
            !b.annotations().is_empty(),
            !b.spec().graceful_eviction_tasks.is_empty(),
            &placement_hash,
            &write,
        );
        let patch: json_patch::Patch = serde_json::from_value(patch)
            .map_err(|e| Error::Invalid(format!("placement patch: {e}")))?;
        match api
            .patch(&name, &PatchParams::default(), &Patch::<()>::Json(patch))
            .await
        {
            Ok(patched) => {
                generation = patched.meta().generation.unwrap_or(generation);
                let evictions = u64::try_from(evicted.len()).unwrap_or(0);
                crate::metrics::metrics()
                    .failover_evictions
                    .inc_by(evictions);
            }
            // The spec changed since it was read (the patch's generation test failed): decide
            // again on the new one.
            Err(kube::Error::Api(s)) if s.code == 422 && s.message.contains("test failed") => {
                return Ok(Action::requeue(Duration::from_millis(100)))
            }
            Err(e) => return Err(Error::hub(format!("write the placement of binding {name}"))(e)),
        }
    }
    let status = status_write(
        b.status(),
        &decision,
        generation,
        &failed_over,
        eviction.now,
    );
    if let Some(status) = status {
        apply_status(&api, &*b, MANAGER, json!(status), "scheduling status").await?;
    } else if spec_unchanged {
        ctx.memo.settle(key, inputs, wake);
    }
    Ok(requeue_at(wake, eviction.now))
}

#[cfg(test)]
mod tests;
