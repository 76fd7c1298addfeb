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

pub mod references;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::policy::v1alpha1::ConflictResolution;
use flotilla_apis::work::v1alpha1::{BindingSnapshot, ResourceBinding};
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Secret, ServiceAccount};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use kube::runtime::controller::Action;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, Resource, ResourceExt};
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};
use tokio_stream::wrappers::UnboundedReceiverStream;

use self::references::{
    dependencies, Dependency, CONFIG_MAP, PERSISTENT_VOLUME_CLAIM, SECRET, SERVICE_ACCOUNT,
};
use super::workload::{binding_name, discover, dynamic_api};
use crate::{Error, Result};

/// Annotation on an attached binding: the dependency object's resourceVersion when its
/// binding was last written, so an edit of the object makes the binding controller render it
/// again.
pub const DEPENDENCY_VERSION_ANNOTATION: &str = "work.flotilla.io/dependency-version";

/// A workload binding, by namespace and name.
type Key = (String, String);

struct Context {
    hub: Client,
    bindings: Store<ResourceBinding>,
    /// What each workload binding needed when last reconciled; a dependency's event wakes the
    /// workloads that need it.
    needs: Mutex<HashMap<Key, Vec<Dependency>>>,
}

/// Runs until dropped.
pub async fn run(hub: Client) {
    let (bindings, writer) = reflector::store();
    let (wake, woken) = unbounded_channel::<ObjectRef<ResourceBinding>>();
    let ctx = Arc::new(Context {
        hub: hub.clone(),
        bindings: bindings.clone(),
        needs: Mutex::new(HashMap::new()),
    });
    // A deleted workload binding is not reconciled (it is gone from the store): wake the
    // attached bindings that list it instead.
    let wake_deleted = wake.clone();
    let store = bindings.clone();
    let binding_feed = watcher(
        Api::<ResourceBinding>::all(hub.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .modify(super::feed::lean::<ResourceBinding>)
    .reflect(writer)
    .for_each(move |event| {
        if let Ok(watcher::Event::Delete(gone)) = event {
            let ns = gone.namespace().unwrap_or_default();
            for a in attached_to(&store, &ns, &gone.name_any()) {
                let _ = wake_deleted.send(ObjectRef::from_obj(&*a));
            }
            // An attached binding gone (its object was deleted or re-created): its workloads
            // attach again what exists now.
            for r in &gone.spec.required_by {
                let wns = r.namespace.as_deref().unwrap_or(&ns);
                let _ = wake_deleted.send(ObjectRef::new(&r.name).within(wns));
            }
        }
        futures::future::ready(())
    });
    tokio::select! {
        _ = binding_feed => {},
        _ = watch_kind::<ConfigMap>(hub.clone(), CONFIG_MAP, ctx.clone(), wake.clone()) => {},
        _ = watch_kind::<Secret>(hub.clone(), SECRET, ctx.clone(), wake.clone()) => {},
        _ = watch_kind::<ServiceAccount>(hub.clone(), SERVICE_ACCOUNT, ctx.clone(), wake.clone()) => {},
        _ = watch_kind::<PersistentVolumeClaim>(hub.clone(), PERSISTENT_VOLUME_CLAIM, ctx.clone(), wake) => {},
        _ = controller(ctx, UnboundedReceiverStream::new(woken)) => {},
    }
}

async fn controller(ctx: Arc<Context>, woken: UnboundedReceiverStream<ObjectRef<ResourceBinding>>) {
    let _ = ctx.bindings.wait_until_ready().await;
    super::feed::controller(Api::<ResourceBinding>::all(ctx.hub.clone()))
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
    wake: UnboundedSender<ObjectRef<ResourceBinding>>,
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

fn error_policy(b: Arc<ResourceBinding>, error: &Error, _: Arc<Context>) -> Action {
    tracing::warn!(binding = %b.name_any(), namespace = ?b.namespace(), %error, "dependencies distributor");
    Action::requeue(Duration::from_secs(5))
}

/// The attached bindings in `ns` that list the workload binding `name`.
fn attached_to(store: &Store<ResourceBinding>, ns: &str, name: &str) -> Vec<Arc<ResourceBinding>> {
    store
        .state()
        .into_iter()
        .filter(|a| a.namespace().as_deref() == Some(ns))
        .filter(|a| a.spec.required_by.iter().any(|r| r.name == name))
        .collect()
}

async fn reconcile(b: Arc<ResourceBinding>, ctx: Arc<Context>) -> Result<Action> {
    let ns = b.namespace().unwrap_or_default();
    let name = b.name_any();
    // As an attached binding: forget workloads that are gone or stopped propagating their
    // dependencies.
    let gone: Vec<String> = b
        .spec
        .required_by
        .iter()
        .filter(|r| {
            let ns = r.namespace.as_deref().unwrap_or(&ns);
            ctx.bindings
                .get(&ObjectRef::new(&r.name).within(ns))
                .is_none_or(|w| !w.spec.propagate_deps)
        })
        .map(|r| r.name.clone())
        .collect();
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
    let snapshot = BindingSnapshot {
        namespace: Some(ns.clone()),
        name: name.clone(),
        clusters: b.spec.clusters.clone(),
    };
    for d in &wanted {
        attach(&ctx, &ns, d, &snapshot, b.spec.conflict_resolution).await?;
    }
    let kept: BTreeSet<String> = wanted
        .iter()
        .map(|d| binding_name(&d.name, d.kind))
        .collect();
    for a in attached_to(&ctx.bindings, &ns, &name) {
        let aname = a.name_any();
        if !kept.contains(&aname) {
            update(&ctx, &ns, &aname, |required| {
                required.retain(|r| r.name != name)
            })
            .await?;
        }
    }
    Ok(Action::await_change())
}

/// The dependencies `b` propagates: none unless it asks for them, is scheduled somewhere and
/// is not being deleted.
async fn wanted(ctx: &Context, b: &ResourceBinding) -> Result<Vec<Dependency>> {
    if !b.spec.propagate_deps
        || b.spec.clusters.is_empty()
        || b.metadata.deletion_timestamp.is_some()
    {
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
    Ok(dependencies(&template))
}

/// Ensures the attached binding of `d` lists `snapshot`, creating it when the object exists.
async fn attach(
    ctx: &Context,
    ns: &str,
    d: &Dependency,
    snapshot: &BindingSnapshot,
    conflict: ConflictResolution,
) -> Result<()> {
    let Some((uid, version)) = object_version(ctx, ns, d).await? else {
        // Not on the hub (yet): its creation wakes this workload.
        return Ok(());
    };
    let bname = binding_name(&d.name, d.kind);
    let api = Api::<ResourceBinding>::namespaced(ctx.hub.clone(), ns);
    let known = ctx.bindings.get(&ObjectRef::new(&bname).within(ns));
    if let Some(stale) = known.as_ref().and_then(|b| b.spec.resource.uid.as_ref()) {
        if *stale != uid {
            // The object was re-created; the garbage collector removes the old one's binding,
            // and that wakes this workload again.
            return Err(Error::Invalid(format!(
                "binding {ns}/{bname} is still the one of an earlier {} {}",
                d.kind, d.name
            )));
        }
    }
    if known.is_none()
        && api
            .get_opt(&bname)
            .await
            .map_err(Error::hub(format!("read binding {ns}/{bname}")))?
            .is_none()
    {
        let body = json!({
            "apiVersion": "work.flotilla.io/v1alpha1",
            "kind": "ResourceBinding",
            "metadata": {
                "name": bname,
                "namespace": ns,
                "annotations": {DEPENDENCY_VERSION_ANNOTATION: version},
                "ownerReferences": [{
                    "apiVersion": "v1", "kind": d.kind, "name": d.name, "uid": uid,
                    "controller": true, "blockOwnerDeletion": true,
                }],
            },
            "spec": {
                "resource": {"apiVersion": "v1", "kind": d.kind, "namespace": ns, "name": d.name, "uid": uid},
                "requiredBy": [snapshot],
                "conflictResolution": conflict,
            },
        });
        let body: ResourceBinding = serde_json::from_value(body)
            .map_err(|e| Error::Invalid(format!("attached binding {ns}/{bname}: {e}")))?;
        match api.create(&PostParams::default(), &body).await {
            Ok(_) => return Ok(()),
            // Created meanwhile (by the detector or another workload): update it below.
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => return Err(Error::hub(format!("create binding {ns}/{bname}"))(e)),
        }
    }
    update_with_version(ctx, ns, &bname, Some(&version), |required| {
        match required.iter_mut().find(|r| r.name == snapshot.name) {
            Some(r) => *r = snapshot.clone(),
            None => required.push(snapshot.clone()),
        }
    })
    .await
}

/// The uid and resourceVersion of dependency `d`, or `None` when it does not exist.
async fn object_version(
    ctx: &Context,
    ns: &str,
    d: &Dependency,
) -> Result<Option<(String, String)>> {
    let hub = ctx.hub.clone();
    let name = d.name.as_str();
    let read = match d.kind {
        CONFIG_MAP => version_of(Api::<ConfigMap>::namespaced(hub, ns), name).await,
        SECRET => version_of(Api::<Secret>::namespaced(hub, ns), name).await,
        SERVICE_ACCOUNT => version_of(Api::<ServiceAccount>::namespaced(hub, ns), name).await,
        _ => version_of(Api::<PersistentVolumeClaim>::namespaced(hub, ns), name).await,
    };
    read.map_err(Error::hub(format!("read {} {ns}/{name}", d.kind)))
}

async fn version_of<K>(api: Api<K>, name: &str) -> kube::Result<Option<(String, String)>>
where
    K: Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    let meta = api.get_metadata_opt(name).await?;
    Ok(meta.map(|m| {
        (
            m.uid().unwrap_or_default(),
            m.resource_version().unwrap_or_default(),
        )
    }))
}

/// Changes the `requiredBy` list of binding `ns/name` with `edit`.
async fn update(
    ctx: &Context,
    ns: &str,
    name: &str,
    edit: impl Fn(&mut Vec<BindingSnapshot>),
) -> Result<()> {
    update_with_version(ctx, ns, name, None, edit).await
}

/// Changes the `requiredBy` list of binding `ns/name` with `edit` (and its dependency version
/// annotation to `version`, if given): a merge patch guarded by the resourceVersion read,
/// first from the store, then, on conflict, from the hub. An attached binding left with no
/// workload and no placement of its own is deleted.
async fn update_with_version(
    ctx: &Context,
    ns: &str,
    name: &str,
    version: Option<&str>,
    edit: impl Fn(&mut Vec<BindingSnapshot>),
) -> Result<()> {
    let api = Api::<ResourceBinding>::namespaced(ctx.hub.clone(), ns);
    let mut current = ctx.bindings.get(&ObjectRef::new(name).within(ns));
    for _ in 0..4 {
        let b = match current.take() {
            Some(b) => b,
            None => match api
                .get_opt(name)
                .await
                .map_err(Error::hub(format!("read binding {ns}/{name}")))?
            {
                Some(b) => Arc::new(b),
                None => return Ok(()),
            },
        };
        let mut required = b.spec.required_by.clone();
        edit(&mut required);
        required.sort_by(|x, y| (&x.namespace, &x.name).cmp(&(&y.namespace, &y.name)));
        let stamp = b.annotations().get(DEPENDENCY_VERSION_ANNOTATION);
        let restamp = version.filter(|v| stamp.map(String::as_str) != Some(v));
        if required == b.spec.required_by && restamp.is_none() {
            return Ok(());
        }
        let rv = b.resource_version();
        let result = if required.is_empty() && b.spec.placement.is_none() {
            let mut dp = DeleteParams::background();
            dp.preconditions = Some(kube::api::Preconditions {
                resource_version: rv,
                uid: None,
            });
            api.delete(name, &dp).await.map(|_| ())
        } else {
            let mut patch = json!({
                "metadata": {"resourceVersion": rv},
                "spec": {"requiredBy": required},
            });
            if let Some(v) = restamp {
                patch["metadata"]["annotations"] = json!({DEPENDENCY_VERSION_ANNOTATION: v});
            }
            api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map(|_| ())
        };
        match result {
            Ok(()) => return Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => return Ok(()),
            // Someone else wrote it since: read it again from the hub.
            Err(kube::Error::Api(s)) if s.code == 409 => continue,
            Err(e) => return Err(Error::hub(format!("update binding {ns}/{name}"))(e)),
        }
    }
    Err(Error::Invalid(format!(
        "binding {ns}/{name} kept changing while its requiredBy list was updated"
    )))
}
