//! Namespace deletion: a terminating namespace is emptied, what remains is reported in its
//! `status.conditions` (as Kubernetes' namespace controller reports it), then its `kubernetes`
//! finalizer is removed, and the namespace goes.

mod conditions;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::cache::ChangeKind;
use crate::meta::{finalizers, now_rfc3339};
use crate::objects::{delete_object, guaranteed_update, DeleteOptions, Writer};
use crate::Api;
use conditions::Remaining;

pub(super) async fn run(api: Arc<Api>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let worker_api = api.clone();
    // The worker ends with the loop.
    let mut tasks = tokio::task::JoinSet::new();
    tasks.spawn(async move {
        while let Some(name) = rx.recv().await {
            // Retry until the namespace is empty or gone; content may still be arriving.
            while let Err(e) = finalize(&worker_api, &name).await {
                tracing::debug!(namespace = %name, reason = %e, "namespace not yet empty");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    });
    super::follow(api, "/registry/core/namespaces/", move |c| {
        let tx = tx.clone();
        async move {
            if c.kind != ChangeKind::Deleted
                && c.object
                    .value()
                    .pointer("/metadata/deletionTimestamp")
                    .is_some()
            {
                let _ = tx.send(c.object.name.clone());
            }
        }
    })
    .await;
}

/// Delete everything in the namespace, record what remains in its conditions, and once nothing
/// is left drop the `kubernetes` finalizer.
async fn finalize(api: &Arc<Api>, ns: &str) -> Result<(), String> {
    let snap = api.registry.snapshot();
    let key = format!("/registry/core/namespaces/{ns}");
    let Some(nsobj) = api.cache.get(&key) else {
        return Ok(());
    };
    let has_fin = nsobj
        .value()
        .pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|f| f == "kubernetes"));
    if !has_fin {
        return Ok(());
    }
    let nsres = snap
        .get("", "v1", "namespaces")
        .ok_or("namespaces not served")?
        .clone();
    let resources: Vec<_> = snap
        .all()
        .filter(|r| r.namespaced && r.storage_version)
        .cloned()
        .collect();
    let mut remaining = Remaining::default();
    // APIs sharing one storage prefix (core and events.k8s.io Events) are emptied once.
    let mut seen = HashSet::new();
    for res in &resources {
        let prefix = res.key_prefix(Some(ns));
        if !seen.insert(prefix.clone()) {
            continue;
        }
        let (items, _, _) = api.cache.list(&prefix, None, None, |_| true);
        for o in items {
            if o.value().pointer("/metadata/deletionTimestamp").is_some() {
                continue;
            }
            if let Err(e) =
                delete_object(api, res, &o.key, &o.name, &DeleteOptions::default()).await
            {
                if e.code != 404 {
                    tracing::warn!(object = %o.key, error = %e, "namespace cleanup could not delete");
                    remaining.delete_errors.push(e.message);
                }
            }
        }
    }
    // What is left, counted as the namespace controller counts it: per served resource (as
    // discovery lists them) and per finalizer.
    api.cache.sync().await.map_err(|e| e.to_string())?;
    for res in &resources {
        let (items, _, _) = api
            .cache
            .list(&res.key_prefix(Some(ns)), None, None, |_| true);
        for o in items {
            let resource = format!("{}.{}", res.plural, res.group);
            remaining.object(resource, &finalizers(&o.value()));
        }
    }
    let now = now_rfc3339();
    let recorded = guaranteed_update(api, Writer::Server, &nsres, &key, ns, false, |cur| {
        let old = cur
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut new = cur.clone();
        if let Some(c) = conditions::update(&old, &remaining, &now) {
            new["status"]["conditions"] = json!(c);
        }
        Ok(new)
    })
    .await;
    match recorded {
        Err(e) if e.code == 404 => return Ok(()),
        Err(e) => return Err(e.to_string()),
        Ok(_) => {}
    }
    if remaining.total() > 0 {
        return Err(format!("{} objects remain", remaining.total()));
    }
    guaranteed_update(api, Writer::Server, &nsres, &key, ns, false, |cur| {
        let mut new = cur.clone();
        let fins: Vec<Value> = cur
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|f| f != "kubernetes")
            .collect();
        new["spec"]["finalizers"] = json!(fins);
        Ok(new)
    })
    .await
    .map(|_| ())
    .or_else(|e| {
        if e.code == 404 {
            Ok(())
        } else {
            Err(e.to_string())
        }
    })
}
