//! Removing objects whose manifests left a Work.
//!
//! Only objects carrying this Work's owner annotation are touched: anything else in the member
//! (including an object another Work or another tool took over since) is left alone.

use std::collections::HashSet;

use flotilla_apis::work::v1alpha1::{DeletePolicy, ResourceIdentifier, Work};
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::GroupVersionKind;
use kube::discovery::Scope;
use kube::{Api, ResourceExt};
use serde_json::json;

use crate::manifest::{self, ManifestRef};
use flotilla_apis::names::{MANAGED_LABEL, OWNER_ANNOTATION};

use crate::{Applier, Error, Result};

/// What pruning did to one object that left the Work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PruneAction {
    /// Deleted (background propagation).
    Deleted,
    /// Left in the member with flotilla's owner annotation removed (deletePolicy Orphan).
    Orphaned,
    /// Already gone from the member.
    Gone,
    /// Not this Work's (no owner annotation for it); left alone.
    NotOurs,
}

/// The outcome of pruning one object.
#[derive(Debug)]
pub struct PruneResult {
    /// The object, as the Work's status last identified it.
    pub identifier: ResourceIdentifier,
    /// What happened, or why it failed.
    pub outcome: Result<PruneAction>,
}

/// `(group, kind, namespace, name)`: the same object whatever the version it is written in.
type Key = (String, String, Option<String>, String);

fn key(id: &ResourceIdentifier) -> Key {
    (
        id.group.clone(),
        id.kind.clone(),
        id.namespace.clone(),
        id.name.clone(),
    )
}

impl Applier {
    /// Deletes (deletePolicy Delete) or orphans (Orphan) the objects in `previous` — the
    /// identifiers of the Work's last status — that `current` no longer contains.
    pub async fn prune(&self, previous: &[ResourceIdentifier], current: &Work) -> Vec<PruneResult> {
        let kept = self.current_keys(current).await;
        let owner = Self::owner(current);
        let mut results = Vec::new();
        for id in previous.iter().filter(|id| !kept.contains(&key(id))) {
            let outcome = self.prune_one(id, &owner, current.spec.delete_policy).await;
            if matches!(
                outcome,
                Ok(PruneAction::Deleted | PruneAction::Gone | PruneAction::Orphaned)
            ) {
                self.forget(id);
            }
            results.push(PruneResult {
                identifier: id.clone(),
                outcome,
            });
        }
        results
    }

    /// The keys of `work`'s manifests, namespaces filled in as apply fills them.
    async fn current_keys(&self, work: &Work) -> HashSet<Key> {
        let mut keys = HashSet::new();
        for (i, m) in work.spec.manifests.iter().enumerate() {
            let Ok(mref) = ManifestRef::of(i, &m.0) else {
                continue;
            };
            let gvk = GroupVersionKind::gvk(&mref.group, &mref.version, &mref.kind);
            let namespace = match self.resolver.resolve(&self.client, &gvk, false).await {
                Ok((_, caps)) if caps.scope == Scope::Cluster => None,
                Ok(_) => Some(mref.namespace.clone().unwrap_or_else(|| "default".into())),
                // Unresolvable: the object cannot have been applied under another namespace.
                Err(_) => mref.namespace.clone(),
            };
            keys.insert((mref.group, mref.kind, namespace, mref.name));
        }
        keys
    }

    async fn prune_one(
        &self,
        id: &ResourceIdentifier,
        owner: &str,
        policy: DeletePolicy,
    ) -> Result<PruneAction> {
        let ar = manifest::api_resource(id);
        let api: Api<DynamicObject> = match &id.namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        };
        let object = match &id.namespace {
            Some(ns) => format!("{} {ns}/{}", id.kind, id.name),
            None => format!("{} {}", id.kind, id.name),
        };
        let found = api.get_opt(&id.name).await.map_err(|source| Error::Read {
            object: object.clone(),
            source,
        })?;
        let Some(found) = found else {
            return Ok(PruneAction::Gone);
        };
        if manifest::owner_of(found.metadata.annotations.as_ref()) != Some(owner) {
            return Ok(PruneAction::NotOurs);
        }
        match policy {
            DeletePolicy::Delete => {
                // A 404 here means someone else deleted it first: the goal is met.
                match api
                    .delete(&found.name_any(), &DeleteParams::background())
                    .await
                {
                    Ok(_) => Ok(PruneAction::Deleted),
                    Err(kube::Error::Api(s)) if s.code == 404 => Ok(PruneAction::Gone),
                    Err(source) => Err(Error::Delete { object, source }),
                }
            }
            DeletePolicy::Orphan => {
                let patch = json!({"metadata": {
                    "annotations": {OWNER_ANNOTATION: null},
                    "labels": {MANAGED_LABEL: null},
                }});
                api.patch(&id.name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .map_err(|source| Error::Write { object, source })?;
                Ok(PruneAction::Orphaned)
            }
        }
    }
}
