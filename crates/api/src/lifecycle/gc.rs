//! Garbage collection by ownerReferences, as Kubernetes' garbage collector does it:
//! - an object all of whose owners are gone is deleted (background propagation);
//! - an owner deleted with `propagationPolicy=Orphan` (finalizer `orphan`) has the references to
//!   it removed from its dependents, then its finalizer removed;
//! - an owner deleted with `Foreground` (finalizer `foregroundDeletion`) has its dependents
//!   deleted first, and goes once none is left.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;

use crate::cache::ChangeKind;
use crate::meta::{finalizers, without_finalizer};
use crate::objects::{delete_object, guaranteed_update, DeleteOptions, Outcome, Writer};
use crate::registry::ResourceInfo;
use crate::Api;

mod foreground;
use foreground::foreground;

#[derive(Default)]
struct Index {
    /// uid of every live object.
    uids: HashSet<String>,
    /// owner uid → keys of objects that name it (no empty sets).
    dependents: HashMap<String, HashSet<String>>,
    /// key → owner uids it names, for objects that have owners only: most objects have none,
    /// and the index must stay small next to the objects themselves.
    owners_of: HashMap<String, Vec<String>>,
}

impl Index {
    /// `key` no longer names these owners.
    fn forget_dependent(&mut self, key: &str, owners: Vec<String>) {
        for o in owners {
            if let Some(d) = self.dependents.get_mut(&o) {
                d.remove(key);
                if d.is_empty() {
                    self.dependents.remove(&o);
                }
            }
        }
    }
}

/// The part of an object the index reads; everything else is skipped while parsing.
#[derive(serde::Deserialize)]
struct GcHead {
    #[serde(default)]
    metadata: GcMeta,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct GcMeta {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    owner_references: Vec<GcOwner>,
    #[serde(default)]
    deletion_timestamp: Option<serde::de::IgnoredAny>,
    #[serde(default)]
    finalizers: Vec<String>,
}

#[derive(serde::Deserialize)]
struct GcOwner {
    #[serde(default)]
    uid: String,
}

enum Job {
    /// Check whether this object's owners are all gone.
    Orphaned(String),
    /// Process the deletion finalizers of this owner.
    Owner(String),
}

fn owner_uids(v: &Value) -> Vec<String> {
    v.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|r| r["uid"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn resource_for(api: &Api, o: &Value) -> Option<ResourceInfo> {
    let av = o["apiVersion"].as_str()?;
    let (group, _) = av.rsplit_once('/').unwrap_or(("", av));
    api.registry
        .snapshot()
        .by_kind(group, o["kind"].as_str()?)
        .map(|r| (**r).clone())
}

pub(super) async fn run(api: Arc<Api>) {
    let index = Arc::new(Mutex::new(Index::default()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Job>();
    let worker_api = api.clone();
    let worker_index = index.clone();
    let retry = tx.clone();
    // The worker ends with the loop.
    let mut tasks = tokio::task::JoinSet::new();
    tasks.spawn(async move {
        while let Some(job) = rx.recv().await {
            if let Err(again) = work(&worker_api, &worker_index, job).await {
                let retry = retry.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(250)).await;
                    let _ = retry.send(again);
                });
            }
        }
    });
    super::follow(api, "/registry/", move |c| {
        let tx = tx.clone();
        let index = index.clone();
        async move {
            // Only the metadata the index needs is decoded: this runs for every write.
            let Ok(meta) = serde_json::from_slice::<GcHead>(&c.object.raw()) else {
                tracing::warn!(key = %c.object.key, "garbage collector cannot read an object's metadata");
                return;
            };
            let GcMeta {
                uid,
                owner_references,
                deletion_timestamp,
                finalizers,
            } = meta.metadata;
            let key = c.object.key.clone();
            let mut idx = index.lock();
            match c.kind {
                ChangeKind::Deleted => {
                    idx.uids.remove(&uid);
                    if let Some(owners) = idx.owners_of.remove(&key) {
                        idx.forget_dependent(&key, owners);
                    }
                    for dep in idx.dependents.get(&uid).cloned().unwrap_or_default() {
                        let _ = tx.send(Job::Orphaned(dep));
                    }
                }
                _ => {
                    idx.uids.insert(uid);
                    let owners: Vec<String> = owner_references.into_iter().map(|r| r.uid).collect();
                    let old = if owners.is_empty() {
                        idx.owners_of.remove(&key)
                    } else {
                        idx.owners_of.insert(key.clone(), owners.clone())
                    };
                    if let Some(old) = old {
                        idx.forget_dependent(&key, old);
                    }
                    for o in &owners {
                        idx.dependents
                            .entry(o.clone())
                            .or_default()
                            .insert(key.clone());
                    }
                    if !owners.is_empty() && owners.iter().all(|o| !idx.uids.contains(o)) {
                        let _ = tx.send(Job::Orphaned(key.clone()));
                    }
                    if deletion_timestamp.is_some()
                        && finalizers
                            .iter()
                            .any(|f| f == "orphan" || f == "foregroundDeletion")
                    {
                        let _ = tx.send(Job::Owner(key));
                    }
                }
            }
        }
    })
    .await;
}

async fn work(api: &Arc<Api>, index: &Mutex<Index>, job: Job) -> Result<(), Job> {
    match job {
        Job::Orphaned(key) => {
            let Some(o) = api.cache.get(&key) else {
                return Ok(());
            };
            let v = o.value();
            let owners = owner_uids(&v);
            let alive = {
                let idx = index.lock();
                owners.iter().any(|u| idx.uids.contains(u))
            };
            if owners.is_empty() || alive || v.pointer("/metadata/deletionTimestamp").is_some() {
                return Ok(());
            }
            let Some(res) = resource_for(api, &v) else {
                return Ok(());
            };
            // Dependents of a foreground deletion go in the foreground too, per their refs'
            // blockOwnerDeletion; plain background is what an orphaned object gets.
            match delete_object(
                api,
                &res,
                &key,
                &o.name,
                &DeleteOptions {
                    propagation: Some("Background".into()),
                    ..Default::default()
                },
            )
            .await
            {
                Ok(_) => Ok(()),
                Err(e) if e.code == 404 => Ok(()),
                Err(e) => {
                    tracing::warn!(object = %key, error = %e, "garbage collector could not delete");
                    Err(Job::Orphaned(key))
                }
            }
        }
        Job::Owner(key) => owner(api, index, &key).await.map_err(|_| Job::Owner(key)),
    }
}

async fn owner(api: &Arc<Api>, index: &Mutex<Index>, key: &str) -> Result<(), ()> {
    let Some(o) = api.cache.get(key) else {
        return Ok(());
    };
    let v = o.value();
    let uid = v
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let fins = finalizers(&v);
    let deps: Vec<String> = index
        .lock()
        .dependents
        .get(&uid)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .collect();
    let Some(res) = resource_for(api, &v) else {
        return Ok(());
    };
    if fins.iter().any(|f| f == "orphan") {
        for dk in &deps {
            let Some(d) = api.cache.get(dk) else { continue };
            let Some(dres) = resource_for(api, &d.value()) else {
                continue;
            };
            let r = drop_owner_ref(api, &dres, dk, &d.name, &uid).await;
            if r.as_ref().is_err_and(|e| e.code != 404) {
                return Err(());
            }
        }
        return drop_finalizer(api, &res, key, &o.name, "orphan").await;
    }
    if fins.iter().any(|f| f == "foregroundDeletion") {
        return foreground(api, &res, key, &o.name, &uid, &deps).await;
    }
    Ok(())
}

/// Takes the finalizer `fin` off the owner `name` at `key`: the collector's work for it is done.
async fn drop_finalizer(
    api: &Arc<Api>,
    res: &ResourceInfo,
    key: &str,
    name: &str,
    fin: &'static str,
) -> Result<(), ()> {
    let r = guaranteed_update(api, Writer::Server, res, key, name, false, |cur| {
        Ok(without_finalizer(cur, fin))
    })
    .await;
    finish(r)
}

/// Removes the reference to the owner `uid` from the dependent at `key`.
async fn drop_owner_ref(
    api: &Arc<Api>,
    res: &ResourceInfo,
    key: &str,
    name: &str,
    uid: &str,
) -> crate::error::Result<Outcome> {
    let uid = uid.to_string();
    guaranteed_update(api, Writer::Server, res, key, name, false, move |cur| {
        let mut new = cur.clone();
        if let Some(refs) = new
            .pointer_mut("/metadata/ownerReferences")
            .and_then(Value::as_array_mut)
        {
            refs.retain(|r| r["uid"].as_str() != Some(uid.as_str()));
            if refs.is_empty() {
                crate::meta::remove_meta(&mut new, "ownerReferences");
            }
        }
        Ok(new)
    })
    .await
}

fn finish<T>(r: Result<T, crate::error::ApiError>) -> Result<(), ()> {
    match r {
        Ok(_) => Ok(()),
        Err(e) if e.code == 404 => Ok(()),
        Err(_) => Err(()),
    }
}
