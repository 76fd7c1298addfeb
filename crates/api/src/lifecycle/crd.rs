//! CustomResourceDefinitions: accepting names, marking them Established, serving them through
//! the registry, and removing their custom resources when they are deleted.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cache::ChangeKind;
use crate::meta::{finalizers, now_rfc3339};
use crate::objects::{delete_object, system_update, DeleteOptions};
use crate::registry::crd::{is_established, resources_for};
use crate::Api;

/// Finalizer that keeps a CRD until its custom resources are gone.
pub const CRD_CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

const PREFIX: &str = "/registry/apiextensions.k8s.io/customresourcedefinitions/";

/// Rebuild the set of served custom resources from the CRDs in the cache.
pub fn refresh(api: &Api) {
    refresh_without(api, None);
}

/// As [`refresh`], but `retiring` (a CRD whose custom resources are all gone and whose finalizer
/// is about to be removed) is no longer served, so no client sees its resource outlive it.
fn refresh_without(api: &Api, retiring: Option<&str>) {
    let (crds, _, _) = api.cache.list(PREFIX, None, None, |_| true);
    let mut custom = Vec::new();
    let mut schemas = Vec::new();
    for c in crds {
        let v = c.value();
        if is_established(&v) && Some(c.name.as_str()) != retiring {
            custom.extend(resources_for(&v));
            schemas.push(v);
        }
    }
    api.set_custom_resources(custom, schemas);
}

pub(super) async fn run(api: Arc<Api>) {
    refresh(&api);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let worker = api.clone();
    tokio::spawn(async move {
        while let Some(name) = rx.recv().await {
            for attempt in 0..50 {
                match reconcile(&worker, &name).await {
                    Ok(()) => break,
                    Err(e) => {
                        tracing::debug!(crd = %name, attempt, reason = %e, "CRD not reconciled yet");
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
            refresh(&worker);
        }
    });
    super::follow(api.clone(), PREFIX, move |c| {
        let tx = tx.clone();
        let api = api.clone();
        async move {
            if c.kind == ChangeKind::Deleted {
                refresh(&api);
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

async fn reconcile(api: &Arc<Api>, name: &str) -> Result<(), String> {
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
            for i in items {
                let _ = delete_object(api, cr, &i.key, &i.name, &DeleteOptions::default()).await;
            }
            return Err("custom resources remain".into());
        }
        refresh_without(api, Some(name));
        system_update(api, &res, &key, name, false, |cur| {
            let mut new = cur.clone();
            let f: Vec<String> = finalizers(cur)
                .into_iter()
                .filter(|f| f != CRD_CLEANUP_FINALIZER)
                .collect();
            crate::meta::set_meta(&mut new, "finalizers", json!(f));
            Ok(new)
        })
        .await
        .map_err(|e| e.to_string())?;
        return Ok(());
    }
    let want_fin = !finalizers(&v).iter().any(|f| f == CRD_CLEANUP_FINALIZER);
    let names = v.pointer("/spec/names").cloned().unwrap_or(json!({}));
    let stored: Vec<Value> = v
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|x| x["storage"] == true)
        .map(|x| x["name"].clone())
        .collect();
    let accepted_ok = v.pointer("/status/acceptedNames") == Some(&names) && is_established(&v);
    if !want_fin && accepted_ok {
        return Ok(());
    }
    system_update(api, &res, &key, name, false, move |cur| {
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
        new["status"] = json!({
            "acceptedNames": names,
            "storedVersions": stored_versions,
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now},
            ],
        });
        Ok(new)
    })
    .await
    .map(|_| ())
    .map_err(|e| e.to_string())
}
