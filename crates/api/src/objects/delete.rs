//! Delete: preconditions, finalizers and the propagation policy decide whether an object goes
//! at once or is marked for deletion and left to its finalizers.

use std::sync::Arc;

use serde_json::{json, Value};

use super::update::{guaranteed_update, Writer};
use super::Outcome;
use crate::error::{ApiError, Result, Target};
use crate::meta::{finalizers, now_rfc3339, set_meta};
use crate::registry::ResourceInfo;
use crate::Api;

/// `DeleteOptions`: what a client (or a lifecycle loop) asks of a delete.
#[derive(Debug, Default, Clone)]
pub(crate) struct DeleteOptions {
    pub dry_run: bool,
    pub propagation: Option<String>,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
}

/// Delete with Kubernetes semantics: objects with finalizers (or asked to be deleted in the
/// foreground or orphaning) are marked with deletionTimestamp and removed once their finalizers
/// are gone; others are removed at once.
pub(crate) async fn delete_object(
    api: &Arc<Api>,
    res: &ResourceInfo,
    key: &str,
    name: &str,
    opts: &DeleteOptions,
) -> Result<Outcome> {
    let t = || Target {
        group: &res.group,
        resource: &res.plural,
        name,
    };
    for _ in 0..16 {
        let cur = api.cache.get(key).ok_or_else(|| ApiError::not_found(t()))?;
        let old = cur.value();
        if let Some(uid) = &opts.precondition_uid {
            if old.pointer("/metadata/uid").and_then(Value::as_str) != Some(uid) {
                return Err(ApiError::conflict(
                    t(),
                    &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                        old.pointer("/metadata/uid")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                    ),
                ));
            }
        }
        if let Some(rv) = &opts.precondition_rv {
            if *rv != cur.mod_revision.to_string() {
                return Err(ApiError::conflict(t(), &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                    cur.mod_revision
                )));
            }
        }
        let mut extra: Vec<&str> = Vec::new();
        match opts.propagation.as_deref() {
            Some("Foreground") => extra.push("foregroundDeletion"),
            Some("Orphan") => extra.push("orphan"),
            _ => {}
        }
        let is_namespace = res.plural == "namespaces" && !res.custom;
        let mut fins = finalizers(&old);
        let has_spec_fins = has_spec_finalizers(res, &old);
        if fins.is_empty() && extra.is_empty() && !is_namespace && !has_spec_fins {
            if opts.dry_run {
                return Ok(Outcome::DryRun(old));
            }
            let r = api
                .store
                .delete(
                    key,
                    cur.mod_revision,
                    super::render_at(api, key, old.clone()),
                )
                .await;
            match r {
                Ok(rec) => return Ok(Outcome::Deleted(super::opened(api, rec)?)),
                Err(flotilla_store::Error::Conflict { .. }) => {
                    api.cache.sync().await?;
                    continue;
                }
                Err(flotilla_store::Error::NotFound { .. }) => {
                    return Err(ApiError::not_found(t()))
                }
                Err(e) => return Err(e.into()),
            }
        }
        // Graceful: mark for deletion; finalizers (ours or others') finish the job.
        let already = old.pointer("/metadata/deletionTimestamp").is_some();
        for e in &extra {
            if !fins.iter().any(|f| f == e) {
                fins.push(e.to_string());
            }
        }
        return guaranteed_update(
            api,
            Writer::Server,
            res,
            key,
            name,
            opts.dry_run,
            move |cur| {
                let mut new = cur.clone();
                if !already {
                    set_meta(&mut new, "deletionTimestamp", json!(now_rfc3339()));
                    set_meta(&mut new, "deletionGracePeriodSeconds", json!(0));
                }
                set_meta(&mut new, "finalizers", json!(fins));
                if is_namespace {
                    new["status"]["phase"] = json!("Terminating");
                }
                Ok(new)
            },
        )
        .await;
    }
    Err(ApiError::conflict(
        t(),
        "too many concurrent writers; try again",
    ))
}

/// Finalizers in `spec` (only namespaces have them) that keep a terminating object alive.
pub(crate) fn has_spec_finalizers(res: &ResourceInfo, obj: &Value) -> bool {
    res.plural == "namespaces"
        && !res.custom
        && obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
}
