//! The dependencies distributor's writes: attaching a workload to the binding of an object it
//! needs (creating that binding when the object exists), and changing an attached binding's
//! `requiredBy` list, retried on conflict (several workloads can share one dependency).

use std::sync::Arc;

use flotilla_apis::policy::v1alpha1::ConflictResolution;
use flotilla_apis::work::v1alpha1::{BindingSnapshot, ResourceBinding};
use k8s_openapi::api::core::v1::{ConfigMap, PersistentVolumeClaim, Secret, ServiceAccount};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Resource, ResourceExt};

use super::plan::{attached_binding, list, required_by_write, Write};
use super::references::{Dependency, CONFIG_MAP, SECRET, SERVICE_ACCOUNT};
use super::Context;
use crate::propagation::workload::binding_name;
use crate::{Error, Result};

/// Ensures the attached binding of `d` lists `snapshot`, creating it when the object exists.
pub(super) async fn attach(
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
    let known = super::stored(&ctx.bindings, ns, &bname);
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
        let body = attached_binding(ns, d, &uid, &version, snapshot, conflict);
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
        list(required, snapshot)
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
pub(super) async fn update(
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
    let mut current = super::stored(&ctx.bindings, ns, name);
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
        let result = match required_by_write(&b, version, &edit) {
            Write::None => return Ok(()),
            Write::Delete => {
                let mut dp = DeleteParams::background();
                dp.preconditions = Some(kube::api::Preconditions {
                    resource_version: b.resource_version(),
                    uid: None,
                });
                api.delete(name, &dp).await.map(|_| ())
            }
            Write::Patch(patch) => api
                .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .map(|_| ()),
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
