//! CustomResourceDefinitions: accepting names, marking them Established, serving them through
//! the registry (see [`served`] for how the served set follows them), and removing their custom
//! resources when they are deleted.

mod names;
mod served;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cache::ChangeKind;
use crate::meta::{finalizers, now_rfc3339, without_finalizer};
use crate::objects::{delete_object, guaranteed_update, DeleteOptions, Writer};
use crate::registry::crd::{is_established, resources_for};
use crate::Api;
use served::Served;

/// Finalizer that keeps a CRD until its custom resources are gone.
pub const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

const PREFIX: &str = "/registry/apiextensions.k8s.io/customresourcedefinitions/";

/// A deleted CRD's objects are not all gone yet.
const REMAIN: &str = "custom resources remain";

pub(super) async fn run(api: Arc<Api>) {
    let served = Arc::new(Served::default());
    served.refresh(&api);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let worker = api.clone();
    let worker_served = served.clone();
    let again = tx.clone();
    tokio::spawn(async move {
        while let Some(name) = rx.recv().await {
            for attempt in 0..50 {
                match reconcile(&worker, &worker_served, &name).await {
                    Ok(()) => break,
                    // Objects being removed may take as long as their own finalizers hold
                    // them: look again later, without holding up the other CRDs.
                    Err(e) if e == REMAIN => {
                        let (again, name) = (again.clone(), name.clone());
                        tokio::spawn(async move {
                            tokio::time::sleep(Duration::from_millis(500)).await;
                            let _ = again.send(name);
                        });
                        break;
                    }
                    Err(e) => {
                        tracing::debug!(crd = %name, attempt, reason = %e, "CRD not reconciled yet");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
            worker_served.refresh(&worker);
        }
    });
    super::follow(api.clone(), PREFIX, move |c| {
        let tx = tx.clone();
        let api = api.clone();
        let served = served.clone();
        async move {
            if c.kind == ChangeKind::Deleted {
                served.refresh(&api);
                // Names the deleted CRD held may now be free for another of its group.
                let group = c.object.value().pointer("/spec/group").cloned();
                let (crds, _, _) = api.cache.list(PREFIX, None, None, |_| true);
                for other in crds {
                    if other.value().pointer("/spec/group").cloned() == group {
                        let _ = tx.send(other.name.clone());
                    }
                }
            } else {
                let _ = tx.send(c.object.name.clone());
            }
        }
    })
    .await;
}

fn crd_res(api: &Api) -> Option<crate::registry::ResourceInfo> {
    api.registry
        .snapshot()
        .get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .map(|r| (**r).clone())
}

async fn reconcile(api: &Arc<Api>, served: &Served, name: &str) -> Result<(), String> {
    let key = format!("{PREFIX}{name}");
    let Some(o) = api.cache.get(&key) else {
        return Ok(());
    };
    let v = o.value();
    let res = crd_res(api).ok_or("CRDs are not served")?;
    if v.pointer("/metadata/deletionTimestamp").is_some() {
        if !finalizers(&v).iter().any(|f| f == CRD_CLEANUP_FINALIZER) {
            return Ok(());
        }
        let group = v
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .unwrap_or("");
        let plural = v
            .pointer("/spec/names/plural")
            .and_then(Value::as_str)
            .unwrap_or("");
        let crs = resources_for(&v);
        let Some(cr) = crs.first() else {
            return Err("no served version".into());
        };
        let (items, _, _) =
            api.cache
                .list(&format!("/registry/{group}/{plural}/"), None, None, |_| {
                    true
                });
        if !items.is_empty() {
            terminating(api, &res, &key, name).await?;
            for i in items {
                let _ = delete_object(api, cr, &i.key, &i.name, &DeleteOptions::default()).await;
            }
            return Err(REMAIN.into());
        }
        // Removing the last finalizer deletes the CRD: stop serving its resource first, so no
        // client that sees the CRD gone still finds the resource.
        let last = finalizers(&v).len() == 1;
        if last {
            served.retire(api, &v);
        }
        let removed = guaranteed_update(api, Writer::Server, &res, &key, name, false, |cur| {
            Ok(without_finalizer(cur, CRD_CLEANUP_FINALIZER))
        })
        .await;
        if let Err(e) = removed {
            if last {
                served.unmark(api, &v);
            }
            return Err(e.to_string());
        }
        return Ok(());
    }
    let want_fin = !finalizers(&v).iter().any(|f| f == CRD_CLEANUP_FINALIZER);
    let (crds, _, _) = api.cache.list(PREFIX, None, None, |_| true);
    let others: Vec<Value> = crds.iter().map(|c| c.value()).collect();
    let verdict = names::accept(&v, &others);
    let stored: Vec<Value> = v
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|x| x["storage"] == true)
        .map(|x| x["name"].clone())
        .collect();
    let settled = if verdict.ok {
        is_established(&v)
    } else {
        condition(&v, "NamesAccepted").is_some_and(|c| c["reason"] == verdict.reason)
    };
    if !want_fin && settled && v.pointer("/status/acceptedNames") == Some(&verdict.accepted) {
        return Ok(());
    }
    // Serve the resource before the write says Established, so a client that sees the
    // condition (`kubectl wait`) can use it at once.
    let establishing = verdict.ok && !is_established(&v);
    let was_established = condition(&v, "Established").cloned();
    if establishing {
        served.establish(api, &v);
    }
    let written = guaranteed_update(api, Writer::Server, &res, &key, name, false, move |cur| {
        let mut new = cur.clone();
        let mut f = finalizers(cur);
        if !f.iter().any(|x| x == CRD_CLEANUP_FINALIZER) {
            f.push(CRD_CLEANUP_FINALIZER.into());
        }
        crate::meta::set_meta(&mut new, "finalizers", json!(f));
        let now = now_rfc3339();
        let mut stored_versions: Vec<Value> = cur.pointer("/status/storedVersions").and_then(Value::as_array).cloned().unwrap_or_default();
        for s in &stored {
            if !stored_versions.contains(s) {
                stored_versions.push(s.clone());
            }
        }
        let names_accepted = json!({"type": "NamesAccepted", "status": if verdict.ok { "True" } else { "False" },
            "reason": verdict.reason, "message": verdict.message, "lastTransitionTime": now});
        let established = match (&was_established, verdict.ok) {
            (_, true) => json!({"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now}),
            // A CRD established before keeps serving under the names it was accepted with.
            (Some(c), false) if c["status"] == "True" => c.clone(),
            _ => json!({"type": "Established", "status": "False", "reason": "NotAccepted", "message": "not all names are accepted", "lastTransitionTime": now}),
        };
        new["status"] = json!({
            "acceptedNames": verdict.accepted,
            "storedVersions": stored_versions,
            "conditions": [names_accepted, established],
        });
        Ok(new)
    })
    .await;
    if let Err(e) = written {
        if establishing {
            served.unmark(api, &v);
        }
        return Err(e.to_string());
    }
    Ok(())
}

/// The condition of `type_` in a CRD's status.
fn condition<'a>(crd: &'a Value, type_: &str) -> Option<&'a Value> {
    crd.pointer("/status/conditions")?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// Say the CRD is terminating while its objects are removed, as kube's finalizer does.
async fn terminating(
    api: &Arc<Api>,
    res: &crate::registry::ResourceInfo,
    key: &str,
    name: &str,
) -> Result<(), String> {
    let Some(o) = api.cache.get(key) else {
        return Ok(());
    };
    if condition(&o.value(), "Terminating").is_some_and(|c| c["status"] == "True") {
        return Ok(());
    }
    guaranteed_update(api, Writer::Server, res, key, name, false, |cur| {
        let mut new = cur.clone();
        let mut conditions: Vec<Value> = cur
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        conditions.retain(|c| c["type"] != "Terminating");
        conditions.push(json!({"type": "Terminating", "status": "True", "reason": "InstanceDeletionInProgress",
            "message": "CustomResource deletion is in progress", "lastTransitionTime": now_rfc3339()}));
        new["status"]["conditions"] = json!(conditions);
        Ok(new)
    })
    .await
    .map(|_| ())
    .map_err(|e| e.to_string())
}
