//! `apiregistration.k8s.io/v1` APIServices, as kube-apiserver's aggregator layer keeps them.
//!
//! The hub serves every API itself, so each APIService it keeps is *local* (no service): one
//! per built-in group version and per served CRD version ([`register`]), available with reason
//! `Local` ([`available`]). A client may create an APIService that names a Service: it is
//! stored and validated as kube does ([`validation`]), and its `Available` condition says why
//! it is not available — the hub proxies to no aggregated API server.
//!
//! One level-triggered loop does both jobs: it follows APIServices, CRDs, Services and
//! Endpoints through the watch cache, and resyncs every [`RESYNC`].

mod available;
mod priorities;
mod register;
pub(crate) mod validation;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::error::Result;
use crate::objects::{commit_create, delete_object, guaranteed_update, DeleteOptions, Writer};
use crate::registry::ResourceInfo;
use crate::Api;

pub use register::AUTOMANAGED;

/// The API group.
pub const GROUP: &str = "apiregistration.k8s.io";
/// The reason of a local APIService's `Available` condition.
pub const LOCAL_REASON: &str = "Local";
/// Its message.
pub const LOCAL_MESSAGE: &str = "Local APIServices are always available";
/// The field manager kube-apiserver's controllers write with.
const MANAGER: &str = "kube-apiserver";
/// How often everything is checked even when nothing changed.
const RESYNC: Duration = Duration::from_secs(30);
/// The CRDs' storage prefix.
const CRDS: &str = "/registry/apiextensions.k8s.io/customresourcedefinitions/";

/// The `kubectl get apiservices` cells `@apiservice` (Service) and `@apiavailable`
/// (Available), as kube-aggregator's table convertor prints them.
pub(crate) fn cell(name: &str, o: &Value) -> Value {
    let text = |p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or("");
    match name {
        "@apiservice" if validation::is_local(o) => json!("Local"),
        "@apiservice" => json!(format!(
            "{}/{}",
            text("/spec/service/namespace"),
            text("/spec/service/name")
        )),
        _ => {
            let conditions = o
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            let available = conditions
                .iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Available"));
            let Some(c) = available else {
                return json!("Unknown");
            };
            let status = c.get("status").and_then(Value::as_str).unwrap_or("");
            let reason = c.get("reason").and_then(Value::as_str).unwrap_or("");
            match (status, reason) {
                ("True", _) | (_, "") => json!(status),
                _ => json!(format!("{status} ({reason})")),
            }
        }
    }
}

/// The groups in the order kube-aggregator lists them in discovery: its own group first, then
/// by their APIServices' highest `groupPriorityMinimum` (built-in groups from kube's table,
/// CRD groups at 1000), ties by that APIService's name. Clients that resolve a resource name
/// served by several groups take the first (kubectl among them).
pub fn discovery_order(groups: &[(String, Vec<String>)]) -> Vec<&(String, Vec<String>)> {
    let mut out: Vec<_> = groups.iter().collect();
    out.sort_by_cached_key(|(group, versions)| {
        if group == GROUP {
            return (i64::MIN, String::new());
        }
        let priority =
            |v: &String| priorities::builtin(group, v).map_or(priorities::CRD.0, |p| p.0);
        let top = versions
            .iter()
            .map(priority)
            .max()
            .unwrap_or(priorities::CRD.0);
        let name = versions
            .iter()
            .filter(|v| priority(v) == top)
            .map(|v| format!("{v}.{group}"))
            .min()
            .unwrap_or_default();
        (-top, name)
    });
    out
}

/// Start the loop that keeps the APIServices.
pub fn start(api: &Arc<Api>) {
    tokio::spawn(run(api.clone()));
}

/// Keep the APIServices: run until the server stops.
async fn run(api: Arc<Api>) {
    let Some(res) = api
        .registry
        .snapshot()
        .get(GROUP, "v1", "apiservices")
        .cloned()
    else {
        return;
    };
    let worker_api = api.clone();
    let worker_res = res.clone();
    let tx = crate::lifecycle::kick::start(
        RESYNC,
        Duration::from_millis(500),
        move || {
            let api = worker_api.clone();
            let res = worker_res.clone();
            async move { reconcile(&api, &res).await }
        },
        |e| tracing::warn!(error = %e, "APIServices not yet as wanted; retrying"),
    );
    let snap = api.registry.snapshot();
    let mut watched = vec![res.key_prefix(None), CRDS.to_string()];
    for plural in ["services", "endpoints"] {
        if let Some(r) = snap.get("", "v1", plural) {
            watched.push(r.key_prefix(None));
        }
    }
    crate::lifecycle::follow(api, "/registry/", move |c| {
        let hit = watched.iter().any(|p| c.object.key.starts_with(p.as_str()));
        if hit {
            let _ = tx.send(());
        }
        async {}
    })
    .await;
}

/// One pass: create, correct and delete the automanaged APIServices, then bring every
/// APIService's `Available` condition up to date.
async fn reconcile(api: &Arc<Api>, res: &Arc<ResourceInfo>) -> Result<()> {
    api.cache.sync().await?;
    let snap = api.registry.snapshot();
    let builtin: BTreeSet<(&str, &str)> = snap
        .all()
        .filter(|r| !r.custom)
        .map(|r| (r.group.as_str(), r.version.as_str()))
        .collect();
    let crds = values(api, CRDS);
    let wanted = register::wanted(builtin, &crds);
    let stored = values(api, &res.key_prefix(None));
    let name_of = |o: &Value| {
        o.pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let have: BTreeSet<String> = stored.iter().map(name_of).collect();
    for (name, w) in &wanted {
        if have.contains(name) {
            continue;
        }
        match commit_create(api, res, w.object(), Some(MANAGER), false).await {
            Ok(_) => tracing::debug!(apiservice = %name, "registered local APIService"),
            Err(e) if e.code == 409 => {}
            // A group version kube's rules refuse as an APIService name (a CRD's, say, past
            // 253 characters) gets none; retrying would not change that.
            Err(e) if e.code == 422 => {
                tracing::debug!(apiservice = %name, error = %e, "no APIService for this group version")
            }
            Err(e) => return Err(e),
        }
    }
    for current in &stored {
        let name = name_of(current);
        let key = res.key(None, &name);
        match register::action(current, wanted.get(&name)) {
            register::Action::Keep => {}
            register::Action::Correct(_) => {
                // Worked out again on the object the update reads, which may be newer.
                let w = wanted.get(&name);
                let r = guaranteed_update(api, Writer::Server, res, &key, &name, false, |cur| {
                    Ok(match register::action(cur, w) {
                        register::Action::Correct(new) => new,
                        _ => cur.clone(),
                    })
                })
                .await;
                ignore_gone(r.map(drop))?;
            }
            register::Action::Delete => {
                let uid = current.pointer("/metadata/uid").and_then(Value::as_str);
                let opts = DeleteOptions {
                    precondition_uid: uid.map(String::from),
                    ..DeleteOptions::default()
                };
                ignore_gone(delete_object(api, res, &key, &name, &opts).await.map(drop))?;
                tracing::debug!(apiservice = %name, "unregistered local APIService");
            }
        }
    }
    for current in values(api, &res.key_prefix(None)) {
        update_availability(api, res, &current).await?;
    }
    Ok(())
}

/// Set `current`'s `Available` condition from what its service reference finds.
async fn update_availability(api: &Arc<Api>, res: &ResourceInfo, current: &Value) -> Result<()> {
    let backend = backend(api, current);
    let verdict = available::verdict(current, &backend);
    if available::with_verdict(current, &verdict).is_none() {
        return Ok(());
    }
    let name = current
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let key = res.key(None, name);
    let r = guaranteed_update(api, Writer::Server, res, &key, name, false, |cur| {
        Ok(available::with_verdict(cur, &verdict).unwrap_or_else(|| cur.clone()))
    })
    .await;
    ignore_gone(r.map(drop))
}

/// The Service and Endpoints an APIService's `spec.service` names.
fn backend(api: &Api, apiservice: &Value) -> available::Backend {
    let text = |p: &str| apiservice.pointer(p).and_then(Value::as_str).unwrap_or("");
    let (ns, name) = (text("/spec/service/namespace"), text("/spec/service/name"));
    let snap = api.registry.snapshot();
    let get = |plural: &str| {
        let r = snap.get("", "v1", plural)?;
        api.cache.get(&r.key(Some(ns), name)).map(|o| o.value())
    };
    available::Backend {
        service: get("services"),
        endpoints: get("endpoints"),
    }
}

/// Every stored object under `prefix`.
fn values(api: &Api, prefix: &str) -> Vec<Value> {
    let (objects, _, _) = api.cache.list(prefix, None, None, |_| true);
    objects.iter().map(|o| o.value()).collect()
}

/// A write that lost to a deletion or another writer is retried by the next pass, not failed.
fn ignore_gone(r: Result<()>) -> Result<()> {
    match r {
        Err(e) if e.code == 404 || e.code == 409 => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests;
