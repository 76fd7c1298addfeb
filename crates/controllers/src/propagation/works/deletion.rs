//! The binding controller's end of a binding: the cleanup finalizer, and deleting Works.
//!
//! The binding carries the finalizer `work.flotilla.io/binding-cleanup`; when the template goes
//! (the hub's garbage collector deletes the binding it owns), the binding's Works are deleted,
//! which removes the objects from the members (or leaves them, when the Works say
//! `deletePolicy: Orphan`), and the finalizer is removed.

use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::work::v1alpha1::Work;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, Client, Resource, ResourceExt};
use serde_json::json;

use crate::propagation::binding::{BindingObject, BINDING_FINALIZER};
use crate::{Error, Result};

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

/// Deletes the `works` of binding `b` being deleted (those not being deleted already), then
/// lets the binding go.
pub(super) async fn finish_deletion<B: BindingObject>(
    hub: &Client,
    b: &B,
    api: &Api<B>,
    works: &[Arc<Work>],
) -> Result<Action> {
    for w in works {
        if w.meta().deletion_timestamp.is_none() {
            delete_work(hub, w).await?;
        }
    }
    set_finalizer(api, b, false).await
}

/// Whether `finalizers` need changing for the cleanup finalizer to be there (`on`) or not,
/// and the list to write if so.
pub(super) fn finalizers_to_write(finalizers: &[String], on: bool) -> Option<Vec<String>> {
    if on == finalizers.iter().any(|f| f == BINDING_FINALIZER) {
        return None;
    }
    let mut out: Vec<String> = finalizers
        .iter()
        .filter(|f| *f != BINDING_FINALIZER)
        .cloned()
        .collect();
    if on {
        out.push(BINDING_FINALIZER.to_owned());
    }
    Some(out)
}

/// Adds (`on`) or removes the cleanup finalizer. Other writers (the detector and scheduler on
/// a new binding, the garbage collector or a namespace deletion on one being deleted) often
/// change the binding meanwhile: on a conflict it is read again and the write retried, rather
/// than waiting for a requeue.
pub(super) async fn set_finalizer<B: BindingObject>(
    api: &Api<B>,
    b: &B,
    on: bool,
) -> Result<Action> {
    let name = b.name_any();
    let mut current: Option<B> = None;
    for _ in 0..4 {
        let now = current.as_ref().unwrap_or(b);
        let Some(finalizers) = finalizers_to_write(now.finalizers(), on) else {
            return Ok(Action::await_change());
        };
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
