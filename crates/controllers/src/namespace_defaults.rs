//! What kube-controller-manager puts into every namespace: the ServiceAccount `default` (its
//! serviceaccounts controller) and the ConfigMap `kube-root-ca.crt` holding the hub's CA (its
//! root-ca-cert-publisher). Pods, Helm charts and the upstream e2e suite expect both in every
//! namespace; a deleted one comes back, a changed ConfigMap is put back.
//!
//! One reconcile per namespace, triggered by the namespace itself and by any change to those two
//! objects in it.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, ServiceAccount};
use kube::api::{ObjectMeta, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{watcher, Controller};
use kube::{Api, Client, ResourceExt};

use crate::{Error, Result};

/// The ServiceAccount every namespace gets.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// The ConfigMap holding the hub's CA.
pub const ROOT_CA_CONFIG_MAP: &str = "kube-root-ca.crt";
/// Its key holding the PEM.
pub const ROOT_CA_KEY: &str = "ca.crt";
/// The annotation kube-controller-manager sets on it (and puts back).
pub const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
/// That annotation's value, as kube-controller-manager words it.
pub const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the \
kube-apiserver when using internal endpoints such as the internal service IP or \
kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

struct Ctx {
    hub: Client,
    root_ca: String,
}

/// Runs until dropped. `root_ca` is the PEM of the CA that signs the hub's serving certificate.
pub async fn run(hub: Client, root_ca: String) {
    let namespaces: Api<Namespace> = Api::all(hub.clone());
    let accounts: Api<ServiceAccount> = Api::all(hub.clone());
    let maps: Api<ConfigMap> = Api::all(hub.clone());
    let by_name = |name: &str| watcher::Config::default().fields(&format!("metadata.name={name}"));
    let ctx = Arc::new(Ctx { hub, root_ca });
    Controller::new(namespaces, watcher::Config::default())
        .watches(accounts, by_name(DEFAULT_SERVICE_ACCOUNT), |sa| {
            sa.namespace().map(|ns| ObjectRef::<Namespace>::new(&ns))
        })
        .watches(maps, by_name(ROOT_CA_CONFIG_MAP), |cm| {
            cm.namespace().map(|ns| ObjectRef::<Namespace>::new(&ns))
        })
        .run(reconcile, retry, ctx)
        .for_each(|r| async move {
            if let Err(e) = r {
                tracing::debug!(error = %e, "namespace defaults");
            }
        })
        .await;
}

fn retry(_ns: Arc<Namespace>, e: &Error, _ctx: Arc<Ctx>) -> Action {
    tracing::warn!(error = %e, "putting the default ServiceAccount and root CA into a namespace");
    Action::requeue(Duration::from_secs(1))
}

async fn reconcile(ns: Arc<Namespace>, ctx: Arc<Ctx>) -> Result<Action> {
    // As kube-controller-manager: nothing is created in a namespace that is going away.
    let phase = ns.status.as_ref().and_then(|s| s.phase.as_deref());
    if ns.metadata.deletion_timestamp.is_some() || phase == Some("Terminating") {
        return Ok(Action::await_change());
    }
    let name = ns.name_any();
    ensure_service_account(&ctx.hub, &name).await?;
    ensure_root_ca(&ctx.hub, &name, &ctx.root_ca).await?;
    Ok(Action::await_change())
}

/// A create that lost a race (409), or met a namespace that is gone (404) or terminating (403),
/// has nothing left to do.
fn settled(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if matches!(s.code, 403 | 404 | 409))
}

async fn ensure_service_account(hub: &Client, ns: &str) -> Result<()> {
    let accounts: Api<ServiceAccount> = Api::namespaced(hub.clone(), ns);
    let action = format!("creating the ServiceAccount {ns}/{DEFAULT_SERVICE_ACCOUNT}");
    if accounts
        .get_opt(DEFAULT_SERVICE_ACCOUNT)
        .await
        .map_err(Error::hub(action.clone()))?
        .is_some()
    {
        return Ok(());
    }
    let sa = ServiceAccount {
        metadata: ObjectMeta {
            name: Some(DEFAULT_SERVICE_ACCOUNT.into()),
            ..ObjectMeta::default()
        },
        ..ServiceAccount::default()
    };
    match accounts.create(&PostParams::default(), &sa).await {
        Ok(_) => Ok(()),
        Err(e) if settled(&e) => Ok(()),
        Err(e) => Err(Error::hub(action)(e)),
    }
}

/// The ConfigMap as it must be: `current` (if any) with the CA and the description put back.
/// `None` when `current` already is.
pub fn desired_root_ca(current: Option<&ConfigMap>, root_ca: &str) -> Option<ConfigMap> {
    let data = std::collections::BTreeMap::from([(ROOT_CA_KEY.to_string(), root_ca.to_string())]);
    if let Some(cm) = current {
        let described = cm
            .annotations()
            .get(DESCRIPTION_ANNOTATION)
            .is_some_and(|d| !d.is_empty());
        if described && cm.data.as_ref() == Some(&data) {
            return None;
        }
    }
    let mut cm = current.cloned().unwrap_or_else(|| ConfigMap {
        metadata: ObjectMeta {
            name: Some(ROOT_CA_CONFIG_MAP.into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    });
    cm.data = Some(data);
    cm.binary_data = None;
    cm.annotations_mut()
        .insert(DESCRIPTION_ANNOTATION.into(), DESCRIPTION.into());
    Some(cm)
}

async fn ensure_root_ca(hub: &Client, ns: &str, root_ca: &str) -> Result<()> {
    let maps: Api<ConfigMap> = Api::namespaced(hub.clone(), ns);
    let action = format!("writing the ConfigMap {ns}/{ROOT_CA_CONFIG_MAP}");
    let current = maps
        .get_opt(ROOT_CA_CONFIG_MAP)
        .await
        .map_err(Error::hub(action.clone()))?;
    let Some(want) = desired_root_ca(current.as_ref(), root_ca) else {
        return Ok(());
    };
    let written = match current {
        // The update carries the resourceVersion read: a concurrent change is a 409, retried.
        Some(_) => {
            maps.replace(ROOT_CA_CONFIG_MAP, &PostParams::default(), &want)
                .await
        }
        None => maps.create(&PostParams::default(), &want).await,
    };
    match written {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Err(Error::Invalid(format!(
            "{action}: it changed meanwhile; trying again"
        ))),
        Err(e) if settled(&e) => Ok(()),
        Err(e) => Err(Error::hub(action)(e)),
    }
}

#[cfg(test)]
mod tests;
