//! `ResourceBinding` and `ClusterResourceBinding` handled as one: the controllers are generic
//! over [`BindingObject`], so each is written once for both scopes.

mod kept;

use std::fmt::Debug;
use std::sync::Arc;

use flotilla_apis::work::v1alpha1::{
    ClusterResourceBinding, ResourceBinding, ResourceBindingSpec, ResourceBindingStatus,
};
use flotilla_watch::{Compact, Informer};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::watcher;
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use serde::Serialize;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};

pub use self::kept::digest_member_statuses;

/// Finalizer the binding controller keeps on a binding until its Works are deleted.
pub const BINDING_FINALIZER: &str = "work.flotilla.io/binding-cleanup";
/// Label on a Work: a hash naming its binding ([`super::workload::binding_label`]).
pub const BINDING_LABEL: &str = "work.flotilla.io/binding";
/// Annotation on a Work: its binding's namespace (absent for a ClusterResourceBinding).
pub const BINDING_NAMESPACE_ANNOTATION: &str = "work.flotilla.io/binding-namespace";
/// Annotation on a Work: its binding's name.
pub const BINDING_NAME_ANNOTATION: &str = "work.flotilla.io/binding-name";
/// Annotation on a binding: the hash of what the detector last wrote, so unchanged templates
/// cost no write.
pub const DETECTOR_HASH_ANNOTATION: &str = "work.flotilla.io/detector-hash";
/// Annotation on a binding: the hash of its template ([`super::workload::template_hash`]).
pub const TEMPLATE_HASH_ANNOTATION: &str = "work.flotilla.io/template-hash";
/// Annotation on a template (and copied to its binding): `true` keeps the member copies when
/// the template is deleted.
pub const ORPHAN_ANNOTATION: &str = "propagation.flotilla.io/orphan";

/// A binding of either scope.
pub trait BindingObject:
    Resource<DynamicType = ()> + Clone + Debug + DeserializeOwned + Serialize + Send + Sync + 'static
{
    /// The shared spec.
    fn spec(&self) -> &ResourceBindingSpec;
    /// The status, if any.
    fn status(&self) -> Option<&ResourceBindingStatus>;
    /// The API for bindings of this kind in `namespace` (ignored for cluster-scoped ones).
    fn api(client: Client, namespace: Option<&str>) -> Api<Self>;
    /// The namespace, for a ResourceBinding.
    fn scope_namespace(&self) -> Option<&str> {
        self.meta().namespace.as_deref()
    }
    /// The process's informer of bindings of this kind.
    fn informer(bindings: &Bindings) -> &Informer<Compact<Self>>;
}

/// The bindings of both scopes, watched once per process and shared by every propagation
/// controller (the detector, the scheduler, the binding controller and the dependencies
/// distributor each kept a copy of every binding before), kept [`Compact`]: each reader
/// [`unpack`]s the bindings it reconciles.
#[derive(Clone)]
pub struct Bindings {
    namespaced: Informer<Compact<ResourceBinding>>,
    cluster: Informer<Compact<ClusterResourceBinding>>,
}

impl Bindings {
    /// Informers of the hub's bindings ([`kept`] of each); their watches start with their
    /// first reader.
    pub fn new(hub: Client) -> Self {
        let config = watcher::Config::default;
        Self {
            namespaced: Informer::compact(Api::all(hub.clone()), config(), |b| {
                kept::keep(&mut b.metadata, b.status.as_mut())
            }),
            cluster: Informer::compact(Api::all(hub), config(), |b| {
                kept::keep(&mut b.metadata, b.status.as_mut())
            }),
        }
    }

    /// The informer of bindings of kind `B`.
    pub fn of<B: BindingObject>(&self) -> &Informer<Compact<B>> {
        B::informer(self)
    }
}

/// A binding by namespace (`None`: a ClusterResourceBinding) and name: how the scheduler's
/// interest, the binding controller's failing set and [`Wake`] name one.
pub type BindingRef = (Option<String>, String);

/// Wakes bindings of either scope by name: the sending ends of a controller's
/// `reconcile_on` streams, one per kind ([`Wake::new`]).
#[derive(Clone)]
pub struct Wake {
    namespaced: UnboundedSender<ObjectRef<Compact<ResourceBinding>>>,
    cluster: UnboundedSender<ObjectRef<Compact<ClusterResourceBinding>>>,
}

/// The receiving ends of a [`Wake`]: ResourceBindings', ClusterResourceBindings'.
pub type Woken = (
    UnboundedReceiver<ObjectRef<Compact<ResourceBinding>>>,
    UnboundedReceiver<ObjectRef<Compact<ClusterResourceBinding>>>,
);

impl Wake {
    /// A wake and the streams it feeds.
    pub fn new() -> (Wake, Woken) {
        let (namespaced, rb) = tokio::sync::mpsc::unbounded_channel();
        let (cluster, crb) = tokio::sync::mpsc::unbounded_channel();
        (
            Wake {
                namespaced,
                cluster,
            },
            (rb, crb),
        )
    }

    /// Wakes binding `name`: a ResourceBinding in `namespace`, else a ClusterResourceBinding.
    pub fn binding(&self, namespace: Option<&str>, name: &str) {
        // A send fails only when the controller is gone, with the process.
        match namespace {
            Some(ns) => {
                let _ = self.namespaced.send(ObjectRef::new(name).within(ns));
            }
            None => {
                let _ = self.cluster.send(ObjectRef::new(name));
            }
        }
    }

    /// Wakes binding `b`.
    pub fn to(&self, b: &BindingRef) {
        self.binding(b.0.as_deref(), &b.1);
    }
}

/// A binding of the shared informer, parsed.
pub fn unpack<B: BindingObject>(kept: &Compact<B>) -> crate::Result<Arc<B>> {
    kept.unpack().map(Arc::new).map_err(|e| {
        crate::Error::Invalid(format!(
            "binding {} kept by the informer does not parse: {e}",
            kube::ResourceExt::name_any(kept)
        ))
    })
}

impl BindingObject for ResourceBinding {
    fn spec(&self) -> &ResourceBindingSpec {
        &self.spec
    }

    fn status(&self) -> Option<&ResourceBindingStatus> {
        self.status.as_ref()
    }

    fn api(client: Client, namespace: Option<&str>) -> Api<Self> {
        Api::namespaced(client, namespace.unwrap_or("default"))
    }

    fn informer(bindings: &Bindings) -> &Informer<Compact<Self>> {
        &bindings.namespaced
    }
}

impl BindingObject for ClusterResourceBinding {
    fn spec(&self) -> &ResourceBindingSpec {
        &self.spec
    }

    fn status(&self) -> Option<&ResourceBindingStatus> {
        self.status.as_ref()
    }

    fn api(client: Client, _: Option<&str>) -> Api<Self> {
        Api::all(client)
    }

    fn scope_namespace(&self) -> Option<&str> {
        None
    }

    fn informer(bindings: &Bindings) -> &Informer<Compact<Self>> {
        &bindings.cluster
    }
}

/// Server-side applies `status` (a JSON object of status fields) to binding `b` as field
/// manager `manager`, forcing: the fields `manager` applied before and leaves out now are given
/// up. `what` names the write in the error (`write the {what} of binding NAME`).
pub async fn apply_status<B: BindingObject>(
    api: &Api<B>,
    b: &B,
    manager: &str,
    status: serde_json::Value,
    what: &str,
) -> crate::Result<()> {
    let name = kube::ResourceExt::name_any(b);
    let mut body = serde_json::json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": B::kind(&()),
        "metadata": {"name": name},
        "status": status,
    });
    if let Some(ns) = b.scope_namespace() {
        body["metadata"]["namespace"] = serde_json::json!(ns);
    }
    // The answer (the whole binding) is not read.
    flotilla_watch::quiet::patch(
        api,
        &name,
        Some("status"),
        &kube::api::PatchParams::apply(manager).force(),
        &kube::api::Patch::Apply(&body),
    )
    .await
    .map_err(crate::Error::hub(format!(
        "write the {what} of binding {name}"
    )))?;
    Ok(())
}
