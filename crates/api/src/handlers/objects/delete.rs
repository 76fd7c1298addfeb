//! DELETE and deletecollection: preconditions, finalizers, propagation policy.

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::{json, Value};

use super::write::{outcome_response, system_update, Outcome};
use super::{not_found, object_key, output, Ctx, Filter};
use crate::error::{ApiError, Result, Target};
use crate::handlers::response;
use crate::meta::{finalizers, now_rfc3339, set_meta};
use crate::registry::ResourceInfo;
use crate::request::{decode_typed_body, BodyFormat, Expect};
use crate::Api;

/// `DeleteOptions` from the query and the (optional) body.
#[derive(Debug, Default, Clone)]
pub(crate) struct DeleteOptions {
    pub dry_run: bool,
    pub propagation: Option<String>,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
}

fn delete_options(ctx: &Ctx) -> Result<DeleteOptions> {
    let mut o = DeleteOptions {
        dry_run: ctx.query.dry_run,
        propagation: ctx.query.propagation_policy.clone(),
        ..Default::default()
    };
    if ctx.query.orphan_dependents == Some(true) && o.propagation.is_none() {
        o.propagation = Some("Orphan".into());
    }
    if !ctx.body.is_empty() {
        let fmt = BodyFormat::from_content_type(ctx.content_type.as_deref())?;
        // Clients send it as meta.k8s.io/v1 or in the resource's group version.
        let expect = Expect {
            api_version: None,
            kind: "DeleteOptions",
        };
        let b: Value = decode_typed_body(fmt, &ctx.body, expect)?;
        if let Some(d) = b.get("dryRun").and_then(Value::as_array) {
            o.dry_run |= d.iter().any(|x| x == "All");
        }
        if let Some(p) = b.get("propagationPolicy").and_then(Value::as_str) {
            o.propagation = Some(p.to_string());
        }
        if b.get("orphanDependents") == Some(&json!(true)) && o.propagation.is_none() {
            o.propagation = Some("Orphan".into());
        }
        o.precondition_uid = b
            .pointer("/preconditions/uid")
            .and_then(Value::as_str)
            .map(String::from);
        o.precondition_rv = b
            .pointer("/preconditions/resourceVersion")
            .and_then(Value::as_str)
            .map(String::from);
    }
    match o.propagation.as_deref() {
        None | Some("Background" | "Foreground" | "Orphan") => Ok(o),
        Some(p) => Err(ApiError::bad_request(format!(
            "invalid propagationPolicy {p:?}: want Background, Foreground or Orphan"
        ))),
    }
}

/// DELETE one object.
pub(super) async fn delete(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
) -> Result<Response<Body>> {
    let opts = delete_options(ctx)?;
    let key = object_key(ctx, res)?;
    let name = ctx.info.name.clone().unwrap_or_default();
    api.cache.sync().await?;
    if api.cache.get(&key).is_none() {
        return Err(not_found(ctx, res));
    }
    let outcome = delete_object(api, res, &key, &name, &opts).await?;
    Ok(outcome_response(res, outcome))
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
        let has_spec_fins = crate::lifecycle::has_spec_finalizers(res, &old);
        if fins.is_empty() && extra.is_empty() && !is_namespace && !has_spec_fins {
            if opts.dry_run {
                return Ok(Outcome::DryRun(old));
            }
            let mut tomb = old.clone();
            let r = api
                .store
                .delete(
                    key,
                    cur.mod_revision,
                    Box::new(move |rev| {
                        set_meta(&mut tomb, "resourceVersion", json!(rev.to_string()));
                        bytes::Bytes::from(serde_json::to_vec(&tomb).unwrap_or_default())
                    }),
                )
                .await;
            match r {
                Ok(rec) => return Ok(Outcome::Deleted(rec)),
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
        return system_update(api, res, key, name, opts.dry_run, move |cur| {
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
        })
        .await;
    }
    Err(ApiError::conflict(
        t(),
        "too many concurrent writers; try again",
    ))
}

/// DELETE a collection: every object the selectors match, one by one.
pub(super) async fn delete_collection(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
) -> Result<Response<Body>> {
    let opts = delete_options(ctx)?;
    let filter = Filter::parse(res, &ctx.query)?;
    api.cache.sync().await?;
    let prefix = res.key_prefix(ctx.info.object_namespace());
    let (items, _, _) = api.cache.list(&prefix, None, None, |o| filter.matches(o));
    let mut deleted = Vec::new();
    for o in items {
        match delete_object(api, res, &o.key, &o.name, &opts).await {
            Ok(_) => deleted.push(output(res, &o)),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let items: Vec<Value> = deleted
        .iter()
        .filter_map(|b| serde_json::from_slice(b).ok())
        .collect();
    Ok(response::json(
        200,
        &json!({
            "kind": format!("{}List", res.kind), "apiVersion": res.api_version(),
            "metadata": {"resourceVersion": api.cache.revision().to_string()}, "items": items,
        }),
    ))
}
