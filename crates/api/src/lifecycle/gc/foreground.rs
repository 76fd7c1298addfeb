//! Foreground deletion: an owner goes once no dependent blocks it, as in Kubernetes' collector
//! (`processDeletingDependentsItem`, and the cycle breaking of `attemptToDeleteItem`).

use std::sync::Arc;

use serde_json::Value;

use super::{drop_finalizer, drop_owner_ref, finish, resource_for};
use crate::cache::CachedObject;
use crate::meta::finalizers;
use crate::objects::{delete_object, guaranteed_update, DeleteOptions, Outcome, Writer};
use crate::registry::ResourceInfo;
use crate::Api;

/// An owner deleted in the foreground goes once no dependent blocks it (a reference to it with
/// `blockOwnerDeletion: true`), as in Kubernetes' collector. Its dependents are deleted —
/// unless another owner that is not being deleted still holds them, which only loses the
/// reference — and a dependent that itself waits for its dependents (a cycle of foreground
/// deletions) stops blocking: its references are made non-blocking, so the cycle unwinds.
pub(super) async fn foreground(
    api: &Arc<Api>,
    res: &ResourceInfo,
    key: &str,
    name: &str,
    uid: &str,
    deps: &[String],
) -> Result<(), ()> {
    let mut blocked = false;
    for d in deps.iter().filter_map(|k| api.cache.get(k)) {
        let dv = d.value();
        let Some(dres) = resource_for(api, &dv) else {
            continue;
        };
        let blocking = blocks(&dv, uid);
        if dv.pointer("/metadata/deletionTimestamp").is_some() {
            if blocking && waits_for_dependents(&dv) {
                finish(unblock_owners(api, &dres, &d).await)?;
            } else if blocking {
                blocked = true;
            }
            continue;
        }
        if held_by_another_owner(api, &dv, uid) {
            finish(drop_owner_ref(api, &dres, &d.key, &d.name, uid).await)?;
            continue;
        }
        blocked |= blocking;
        let r = delete_object(
            api,
            &dres,
            &d.key,
            &d.name,
            &DeleteOptions {
                propagation: Some("Foreground".into()),
                ..Default::default()
            },
        )
        .await;
        if r.is_err_and(|e| e.code != 404) {
            blocked = true;
        }
    }
    if blocked {
        // Come back when the blocking dependents are gone.
        return Err(());
    }
    drop_finalizer(api, res, key, name, "foregroundDeletion").await
}

/// Whether `dep` names the owner `uid` with `blockOwnerDeletion: true`.
fn blocks(dep: &Value, uid: &str) -> bool {
    owner_refs(dep)
        .iter()
        .any(|r| r["uid"].as_str() == Some(uid) && r["blockOwnerDeletion"].as_bool() == Some(true))
}

/// Whether the object is itself being deleted in the foreground.
fn waits_for_dependents(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp").is_some()
        && finalizers(v).iter().any(|f| f == "foregroundDeletion")
}

fn owner_refs(v: &Value) -> &[Value] {
    v.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Whether `dep` has an owner other than `uid` that exists and is not being deleted (kube's
/// "solid" owner): then only the reference to `uid` goes.
fn held_by_another_owner(api: &Api, dep: &Value, uid: &str) -> bool {
    let ns = dep.pointer("/metadata/namespace").and_then(Value::as_str);
    owner_refs(dep).iter().any(|r| {
        if r["uid"].as_str() == Some(uid) {
            return false;
        }
        let (Some(av), Some(kind), Some(name)) = (
            r["apiVersion"].as_str(),
            r["kind"].as_str(),
            r["name"].as_str(),
        ) else {
            return false;
        };
        let (group, _) = av.rsplit_once('/').unwrap_or(("", av));
        let Some(ores) = api.registry.snapshot().by_kind(group, kind).cloned() else {
            return false;
        };
        let okey = ores.key(ns, name);
        api.cache.get(&okey).is_some_and(|o| {
            let ov = o.value();
            ov.pointer("/metadata/uid").and_then(Value::as_str) == r["uid"].as_str()
                && ov.pointer("/metadata/deletionTimestamp").is_none()
        })
    })
}

/// Makes every owner reference of `dep` non-blocking (how kube's collector breaks a cycle).
async fn unblock_owners(
    api: &Arc<Api>,
    res: &ResourceInfo,
    dep: &CachedObject,
) -> crate::error::Result<Outcome> {
    guaranteed_update(
        api,
        Writer::Server,
        res,
        &dep.key,
        &dep.name,
        false,
        |cur| {
            let mut new = cur.clone();
            if let Some(refs) = new
                .pointer_mut("/metadata/ownerReferences")
                .and_then(Value::as_array_mut)
            {
                for r in refs
                    .iter_mut()
                    .filter(|r| r.get("blockOwnerDeletion").is_some())
                {
                    r["blockOwnerDeletion"] = Value::Bool(false);
                }
            }
            Ok(new)
        },
    )
    .await
}
