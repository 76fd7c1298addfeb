//! The dependencies distributor: with `propagateDeps`, the ConfigMaps, Secrets,
//! ServiceAccount and PersistentVolumeClaims a workload's pods refer to
//! ([`references::dependencies`]) follow it into every cluster it is scheduled to, and leave
//! with it.
//!
//! For each scheduled workload binding with `propagateDeps`, every dependency that exists on
//! the hub gets an *attached* binding: the ordinary binding name `<name>-<kind>` in the same
//! namespace, owned by the dependency object, with no placement of its own and a `requiredBy`
//! entry per workload binding that needs it, carrying that binding's clusters. The binding
//! controller sends an attached binding's object to the union of the `requiredBy` clusters
//! (and, when a policy also selects the object itself, its own clusters too).
//!
//! The workload's entry is updated when its clusters change (failover, a policy edit) and
//! removed when it no longer refers to the object, stops propagating its dependencies, or is
//! deleted; an attached binding left with no entry and no placement is deleted, so its Works
//! and the member copies go. A dependency created or edited after its workload is picked up
//! from a metadata watch of the four kinds: the edit bumps the annotation
//! `work.flotilla.io/dependency-version` on the attached binding, so the binding controller
//! renders the new content.
//!
//! Writes are merge patches carrying the resourceVersion read (several workloads can share
//! one dependency), retried on conflict.

mod attach;
mod plan;
pub mod references;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::config::v1alpha1::ResourceInterpreter;
use flotilla_apis::work::v1alpha1::ResourceBinding;
use flotilla_watch::{Change, Compact, Informer};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Secret, ServiceAccount};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Resource, ResourceExt};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio_stream::wrappers::UnboundedReceiverStream;

use self::attach::{attach, update};
use self::plan::{attached_to, follows, forgotten, released, snapshot};
use self::references::{
    dependencies, Dependency, CONFIG_MAP, PERSISTENT_VOLUME_CLAIM, SECRET, SERVICE_ACCOUNT,
};
use super::binding::{unpack, Bindings};
use super::interpreters::Interpreters;
use super::workload::{discover, dynamic_api};
use crate::shards::{binding_key, Shards};
use crate::{Error, Result};

/// Annotation on an attached binding: the dependency object's resourceVersion when its
/// binding was last written, so an edit of the object makes the binding controller render it
/// again.
pub const DEPENDENCY_VERSION_ANNOTATION: &str = "work.flotilla.io/dependency-version";

/// A workload binding, by namespace and name.
type Key = (String, String);

struct Context {
    hub: Client,
    shards: Shards,
    bindings: Store<Compact<ResourceBinding>>,
    /// What each workload binding needed when last reconciled; a dependency's event wakes the
    /// workloads that need it.
    needs: Mutex<HashMap<Key, Vec<Dependency>>>,
    /// For kinds whose ResourceInterpreter names their dependencies.
    interpreters: Interpreters,
}

/// Runs until dropped, for the bindings in the shards `shards` owns.
pub async fn run(hub: Client, shards: Shards, bindings: Bindings) {
    let informer = bindings.of::<ResourceBinding>().clone();
    let (interpreters, ri_writer) = reflector::store();
    let ri_feed = super::feed::feed(
        Api::<ResourceInterpreter>::all(hub.clone()),
        ri_writer,
        None,
    );
    let (wake, woken) = unbounded_channel::<ObjectRef<Compact<ResourceBinding>>>();
    let ctx = Arc::new(Context {
        hub: hub.clone(),
        shards,
        bindings: informer.store(),
        needs: Mutex::new(HashMap::new()),
        interpreters: Interpreters::new(interpreters),
    });
    // A deleted workload binding is not reconciled (it is gone from the store): wake the
    // attached bindings that list it instead.
    let wake_deleted = wake.clone();
    let store = ctx.bindings.clone();
    let deletions = informer.subscribe().for_each(move |change| {
        if let Change::Deleted(gone) = change {
            let ns = gone.namespace().unwrap_or_default();
            for a in attached_to(attached_in(&store, &ns), &ns, &gone.name_any()) {
                let _ = wake_deleted.send(ObjectRef::new(&a.name_any()).within(&ns));
            }
            // An attached binding gone (its object was deleted or re-created): its workloads
            // attach again what exists now.
            let required_by = match unpack(&gone) {
                Ok(gone) => gone.spec.required_by.clone(),
                Err(_) => Vec::new(),
            };
            for r in &required_by {
                let wns = r.namespace.as_deref().unwrap_or(&ns);
                let _ = wake_deleted.send(ObjectRef::new(&r.name).within(wns));
            }
        }
        futures::future::ready(())
    });
    tokio::select! {
        _ = deletions => {},
        _ = ri_feed => {},
        _ = watch_kind::<ConfigMap>(hub.clone(), CONFIG_MAP, ctx.clone(), wake.clone()) => {},
        _ = watch_kind::<Secret>(hub.clone(), SECRET, ctx.clone(), wake.clone()) => {},
        _ = watch_kind::<ServiceAccount>(hub.clone(), SERVICE_ACCOUNT, ctx.clone(), wake.clone()) => {},
        _ = watch_kind::<PersistentVolumeClaim>(hub.clone(), PERSISTENT_VOLUME_CLAIM, ctx.clone(), wake) => {},
        _ = controller(ctx, &informer, UnboundedReceiverStream::new(woken)) => {},
    }
}

async fn controller(
    ctx: Arc<Context>,
    informer: &Informer<Compact<ResourceBinding>>,
    woken: UnboundedReceiverStream<ObjectRef<Compact<ResourceBinding>>>,
) {
    let _ = ctx.bindings.wait_until_ready().await;
    ctx.interpreters.ready().await;
    super::feed::shared_controller(informer, &ctx.shards)
        .reconcile_on(woken)
        .run(reconcile, error_policy, ctx)
        .for_each(crate::metrics::count("dependencies"))
        .await;
}

/// Wakes the workload bindings that need an object of `kind` whenever one changes.
async fn watch_kind<K>(
    hub: Client,
    kind: &'static str,
    ctx: Arc<Context>,
    wake: UnboundedSender<ObjectRef<Compact<ResourceBinding>>>,
) where
    K: Resource<DynamicType = ()> + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
    K: Send + Sync + 'static,
{
    watcher(
        Api::<PartialObjectMeta<K>>::all(hub),
        watcher::Config::default(),
    )
    .default_backoff()
    .touched_objects()
    .for_each(|o| {
        if let Ok(o) = o {
            let ns = o.namespace().unwrap_or_default();
            let name = o.name_any();
            let needs = ctx.needs.lock();
            for ((wns, wname), deps) in needs.iter() {
                if *wns == ns && deps.iter().any(|d| d.kind == kind && d.name == name) {
                    let _ = wake.send(ObjectRef::new(wname).within(wns));
                }
            }
        }
        futures::future::ready(())
    })
    .await;
}

fn error_policy(b: Arc<Compact<ResourceBinding>>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(binding = %b.name_any(), namespace = ?b.namespace(), %error, "dependencies distributor");
    Action::requeue(Duration::from_secs(5))
}

async fn reconcile(b: Arc<Compact<ResourceBinding>>, ctx: Arc<Context>) -> Result<Action> {
    let b = unpack(&b)?;
    let key = binding_key(b.metadata.namespace.as_deref(), &b.name_any());
    let shards = ctx.shards.clone();
    shards.reconcile(&key, reconcile_owned(b, ctx)).await
}

async fn reconcile_owned(b: Arc<ResourceBinding>, ctx: Arc<Context>) -> Result<Action> {
    let ns = b.namespace().unwrap_or_default();
    let name = b.name_any();
    // As an attached binding: forget workloads that are gone or stopped propagating their
    // dependencies.
    let gone = forgotten(&b.spec.required_by, &ns, |wns, wname| {
        stored(&ctx.bindings, wns, wname).is_some_and(|w| w.spec.propagate_deps)
    });
    if !gone.is_empty() {
        update(&ctx, &ns, &name, |required| {
            required.retain(|r| !gone.contains(&r.name))
        })
        .await?;
    }
    // As a workload binding: what it needs now.
    let wanted = wanted(&ctx, &b).await?;
    let key = (ns.clone(), name.clone());
    let needed_before = if wanted.is_empty() {
        ctx.needs.lock().remove(&key).is_some()
    } else {
        ctx.needs.lock().insert(key, wanted.clone()).is_some()
    };
    if !b.spec.propagate_deps && !needed_before {
        // Never attached anything since this process started, and bindings it attached to
        // before drop it themselves (above): no scan of the namespace's bindings.
        return Ok(Action::await_change());
    }
    let snapshot = snapshot(&ns, &b);
    for d in &wanted {
        attach(&ctx, &ns, d, &snapshot, b.spec.conflict_resolution).await?;
    }
    let attached = attached_to(attached_in(&ctx.bindings, &ns), &ns, &name);
    for aname in released(&attached, &wanted) {
        update(&ctx, &ns, &aname, |required| {
            required.retain(|r| r.name != name)
        })
        .await?;
    }
    Ok(Action::await_change())
}

/// Binding `ns/name` as the informer keeps it, parsed.
fn stored(
    bindings: &Store<Compact<ResourceBinding>>,
    ns: &str,
    name: &str,
) -> Option<Arc<ResourceBinding>> {
    let kept = bindings.get(&ObjectRef::new(name).within(ns))?;
    unpack(&kept).ok()
}

/// The bindings in `ns` that may be attached ones, parsed: those with the dependency version
/// annotation, which [`attach`] writes with every `requiredBy` entry (the others, the
/// workloads' own, are not parsed).
fn attached_in(bindings: &Store<Compact<ResourceBinding>>, ns: &str) -> Vec<Arc<ResourceBinding>> {
    bindings
        .state()
        .iter()
        .filter(|b| b.meta().namespace.as_deref() == Some(ns))
        .filter(|b| b.annotations().contains_key(DEPENDENCY_VERSION_ANNOTATION))
        .filter_map(|b| unpack(b).ok())
        .collect()
}

/// The dependencies `b` propagates: none unless it asks for them, is scheduled somewhere and
/// is not being deleted.
async fn wanted(ctx: &Context, b: &ResourceBinding) -> Result<Vec<Dependency>> {
    if !follows(b) {
        return Ok(Vec::new());
    }
    let r = &b.spec.resource;
    let ns = b.metadata.namespace.as_deref();
    // The binding controller refuses such a binding; its references are not followed either.
    if super::scope::refused_reference(ns, r).is_some() {
        return Ok(Vec::new());
    }
    let (resource, namespaced) = discover(&ctx.hub, &r.api_version, &r.kind)
        .await
        .map_err(Error::hub(format!("discover {} {}", r.api_version, r.kind)))?;
    if super::scope::refused_kind(ns, &r.kind, namespaced).is_some() {
        return Ok(Vec::new());
    }
    let api = dynamic_api(
        ctx.hub.clone(),
        &resource,
        namespaced,
        r.namespace.as_deref(),
    );
    let Some(template) = api
        .get_opt(&r.name)
        .await
        .map_err(Error::hub(format!("read {} {}", r.kind, r.name)))?
    else {
        return Ok(Vec::new());
    };
    let mut template = serde_json::to_value(template).unwrap_or_default();
    template["apiVersion"] = json!(r.api_version);
    template["kind"] = json!(r.kind);
    // A kind's interpreter names them when it has a dependencies rule (a built-in kind's too).
    let interpreter = ctx.interpreters.for_kind(&r.api_version, &r.kind);
    let Some(named) = interpreter
        .as_deref()
        .and_then(|i| i.dependencies(&template))
    else {
        return Ok(dependencies(&template));
    };
    // A rule failing on the object leaves what is attached as it is (the error requeues).
    let named = named.map_err(|e| {
        Error::Invalid(format!(
            "the dependencies rule of {}'s ResourceInterpreter fails on {}: {e}",
            r.kind, r.name
        ))
    })?;
    let (followed, ignored) = interpreted(named, ns.unwrap_or_default());
    if !ignored.is_empty() {
        tracing::warn!(binding = %b.name_any(), ignored = %ignored.join(", "),
            "dependencies a ResourceInterpreter names that flotilla does not follow (only ConfigMaps, Secrets, ServiceAccounts and PersistentVolumeClaims of the workload's namespace)");
    }
    Ok(followed)
}

/// The dependencies an interpreter's rule names that the controller follows (core ConfigMaps,
/// Secrets, ServiceAccounts and PersistentVolumeClaims in the workload's namespace `ns`),
/// sorted and once each, and the others, as text.
fn interpreted(
    named: Vec<flotilla_interpreter::Dependency>,
    ns: &str,
) -> (Vec<Dependency>, Vec<String>) {
    let mut followed = Vec::new();
    let mut ignored = Vec::new();
    for d in named {
        let kind = [CONFIG_MAP, SECRET, SERVICE_ACCOUNT, PERSISTENT_VOLUME_CLAIM]
            .into_iter()
            .find(|k| *k == d.kind);
        let here = d.namespace.is_empty() || d.namespace == ns;
        match kind {
            Some(kind) if d.api_version == "v1" && here && !d.name.is_empty() => {
                followed.push(Dependency { kind, name: d.name });
            }
            _ => ignored.push(format!(
                "{} {} {}/{}",
                d.api_version, d.kind, d.namespace, d.name
            )),
        }
    }
    followed.sort();
    followed.dedup();
    (followed, ignored)
}

#[cfg(test)]
mod tests;
