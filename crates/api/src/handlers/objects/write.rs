//! Create, update and patch, and the compare-and-swap loop every write goes through.

use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use http::Response;
use serde_json::{json, Value};

use super::{not_found, object_key, output, output_raw, output_value, Ctx};
use crate::cache::CachedObject;
use crate::error::{ApiError, Result, Target};
use crate::handlers::response;
use crate::meta::{self, meta_str, now_rfc3339, remove_meta, set_meta};
use crate::registry::ResourceInfo;
use crate::request::{decode_body, decode_typed_body, BodyFormat, Expect};
use crate::Api;

/// What a guaranteed update ended in.
pub(crate) enum Outcome {
    /// A new revision was written.
    Written(flotilla_store::Record),
    /// Nothing changed; the current object stands.
    Unchanged(Arc<CachedObject>),
    /// The update removed the last finalizer of a terminating object, so it was deleted.
    Deleted(flotilla_store::Record),
    /// dryRun: what would have been written.
    DryRun(Value),
}

pub(super) fn render(mut obj: Value) -> flotilla_store::Render {
    Box::new(move |rev| {
        set_meta(&mut obj, "resourceVersion", Value::String(rev.to_string()));
        let mut json = serde_json::to_vec(&obj).unwrap_or_default();
        // The watch cache keeps these bytes for the object's life; without this they would
        // keep the doubling growth's spare capacity (up to half again the object's size).
        json.shrink_to_fit();
        Bytes::from(json)
    })
}

fn target<'a>(res: &'a ResourceInfo, name: &'a str) -> Target<'a> {
    Target {
        group: &res.group,
        resource: &res.plural,
        name,
    }
}

fn body_object(ctx: &Ctx, res: &ResourceInfo) -> Result<Value> {
    let format = BodyFormat::from_content_type(ctx.content_type.as_deref())?;
    if format.is_patch() {
        return Err(ApiError::unsupported_media_type(
            "a patch content type was sent with a create or update; use PATCH",
        ));
    }
    let api_version = res.api_version();
    let expect = Expect {
        api_version: Some(&api_version),
        kind: &res.kind,
    };
    let v = decode_typed_body(format, &ctx.body, expect)?;
    if !v.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    Ok(v)
}

/// Check apiVersion/kind of a body against the resource, filling them in when absent.
fn check_type(res: &ResourceInfo, obj: &mut Value) -> Result<()> {
    let want_av = res.api_version();
    match obj.get("apiVersion").and_then(Value::as_str) {
        None | Some("") => obj["apiVersion"] = json!(want_av),
        Some(av) if av == want_av => {}
        Some(av) => {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({av}) does not match the expected API version ({want_av})"
            )))
        }
    }
    match obj.get("kind").and_then(Value::as_str) {
        None | Some("") => obj["kind"] = json!(res.kind),
        Some(k) if k == res.kind => {}
        Some(k) => {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({k}) does not match the expected kind ({}) of resource {}",
                res.kind,
                res.group_resource()
            )))
        }
    }
    Ok(())
}

fn validate_name(res: &ResourceInfo, name: &str) -> Option<String> {
    if res.group.is_empty() && matches!(res.plural.as_str(), "namespaces" | "services") {
        meta::names::dns_label(name)
    } else if res.group == "rbac.authorization.k8s.io" {
        meta::names::path_segment(name)
    } else {
        meta::names::dns_subdomain(name)
    }
}

/// Namespaced writes need an existing namespace that isn't being deleted. `name` is the
/// object's (empty for generateName, as kube-apiserver's admission sees it).
async fn check_namespace(
    api: &Api,
    res: &ResourceInfo,
    ns: Option<&str>,
    name: &str,
) -> Result<()> {
    let Some(ns) = ns.filter(|_| res.namespaced) else {
        return Ok(());
    };
    let nskey = format!("/registry/core/namespaces/{ns}");
    let mut found = api.cache.get(&nskey);
    if found.is_none() {
        // The namespace may have been created a moment ago (like NamespaceLifecycle's live
        // lookup on an informer miss): only a consistent read may say it doesn't exist.
        api.cache.sync().await?;
        found = api.cache.get(&nskey);
    }
    let Some(n) = found else {
        return Err(ApiError::not_found(Target {
            group: "",
            resource: "namespaces",
            name: ns,
        }));
    };
    if n.value().pointer("/metadata/deletionTimestamp").is_some() {
        return Err(terminating(res, ns, name));
    }
    Ok(())
}

/// kube-apiserver's NamespaceLifecycle refusal: `configmaps "x" is forbidden: unable to …`.
fn terminating(res: &ResourceInfo, ns: &str, name: &str) -> ApiError {
    let resource = if res.group.is_empty() {
        res.plural.clone()
    } else {
        format!("{}.{}", res.plural, res.group)
    };
    let subject = if name.is_empty() {
        resource
    } else {
        format!("{resource} {name:?}")
    };
    ApiError {
        details: Some(json!({"name": name, "group": res.group, "kind": res.plural})),
        ..ApiError::forbidden(format!(
            "{subject} is forbidden: unable to create new content in namespace {ns} because it is being terminated"
        ))
    }
}

const GENERATE_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn generate_suffix() -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    (0..5)
        .map(|_| GENERATE_CHARS[rng.gen_range(0..GENERATE_CHARS.len())] as char)
        .collect()
}

/// POST: create an object.
pub(super) async fn create(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
) -> Result<Response<Body>> {
    let mut obj = body_object(ctx, res)?;
    check_type(res, &mut obj)?;
    let ns = ctx.info.object_namespace();
    if res.namespaced {
        match meta_str(&obj, "namespace") {
            Some(n) if Some(n) != ns && !n.is_empty() => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ))
            }
            _ => set_meta(&mut obj, "namespace", json!(ns)),
        }
    } else {
        remove_meta(&mut obj, "namespace");
    }
    crate::access::join::admit_create(&api.cache, &ctx.user, res, &mut obj).await?;
    let warnings = api.validate(res, &mut obj, ctx.query.field_validation)?;
    api.access
        .admit_rbac_write(&api.cache, &ctx.user, &ctx.info, res, None, &obj)?;
    let manager = ctx.field_manager();
    let rec = commit_create(api, res, obj, Some(&manager), ctx.query.dry_run).await?;
    let r = match rec {
        Outcome::Written(r) => response::raw(201, output_raw(res, &r.value)),
        Outcome::DryRun(v) => response::json(201, &output_value(res, v)),
        _ => return Err(ApiError::internal("create ended without a write")),
    };
    Ok(response::with_warnings(r, &warnings))
}

/// Set the system fields of a new object, check it, and write it.
pub(crate) async fn commit_create(
    api: &Arc<Api>,
    res: &ResourceInfo,
    mut obj: Value,
    manager: Option<&str>,
    dry_run: bool,
) -> Result<Outcome> {
    let ns = meta_str(&obj, "namespace").map(String::from);
    let generate = meta_str(&obj, "generateName").map(String::from);
    let given = meta_str(&obj, "name")
        .map(String::from)
        .filter(|n| !n.is_empty());
    if given.is_none() && generate.is_none() {
        return Err(ApiError::invalid(
            &res.kind,
            "",
            &res.group,
            vec![(
                "metadata.name".into(),
                "Required value: name or generateName is required".into(),
            )],
        ));
    }
    check_namespace(api, res, ns.as_deref(), given.as_deref().unwrap_or("")).await?;
    for key in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        remove_meta(&mut obj, key);
    }
    set_meta(&mut obj, "uid", json!(uuid::Uuid::new_v4().to_string()));
    set_meta(&mut obj, "creationTimestamp", json!(now_rfc3339()));
    if meta::generation::tracked(res) {
        set_meta(&mut obj, "generation", json!(1));
    }
    if res.status {
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
        }
    }
    crate::defaults::on_create(res, &mut obj);
    crate::validation::check(res, &obj)?;
    // Every outcome holds the object as stored; responses convert it back.
    let mut obj = crate::registry::storage::to_storage(res, obj);
    // Server-side apply arrives with its managedFields already computed (manager None).
    if let Some(manager) = manager {
        api.track_managed_fields(res, None, &mut obj, manager, None);
    }
    crate::limits::check_storable(&obj)?;
    for attempt in 0..8 {
        let name = match (&given, &generate) {
            (Some(n), _) => n.clone(),
            (None, Some(g)) => format!("{g}{}", generate_suffix()),
            (None, None) => unreachable!("checked above"),
        };
        if let Some(msg) = validate_name(res, &name) {
            return Err(ApiError::invalid(
                &res.kind,
                &name,
                &res.group,
                vec![(
                    "metadata.name".into(),
                    format!("Invalid value: {name:?}: {msg}"),
                )],
            ));
        }
        set_meta(&mut obj, "name", json!(name));
        if generate.is_some() {
            // Defaults that follow the name (a namespace's name label) see the generated one.
            crate::defaults::apply(res, &mut obj);
        }
        let key = res.key(ns.as_deref(), &name);
        if dry_run {
            // A dry run answers what the real create would: a taken name is a conflict.
            api.cache.sync().await?;
            match api.cache.get(&key) {
                None => return Ok(Outcome::DryRun(obj)),
                Some(_) if given.is_none() && attempt < 7 => continue,
                Some(_) => return Err(ApiError::already_exists(target(res, &name))),
            }
        }
        match api.store.create(&key, render(obj.clone())).await {
            Ok(r) => return Ok(Outcome::Written(r)),
            Err(flotilla_store::Error::AlreadyExists { .. }) if given.is_none() && attempt < 7 => {
                continue
            }
            Err(flotilla_store::Error::AlreadyExists { .. }) => {
                return Err(ApiError::already_exists(target(res, &name)))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::already_exists(target(
        res,
        generate.as_deref().unwrap_or(""),
    )))
}

/// Read-modify-write with compare-and-swap, retried on conflicts the client didn't ask for.
/// `change` gets the current object and returns the desired one; a resourceVersion inside the
/// desired object that differs from the current one is the client's precondition → 409.
pub(crate) async fn guaranteed_update<F>(
    api: &Arc<Api>,
    res: &ResourceInfo,
    key: &str,
    name: &str,
    dry_run: bool,
    change: F,
) -> Result<Outcome>
where
    F: FnMut(&Value) -> Result<Value>,
{
    update_loop(api, res, key, name, dry_run, false, change).await
}

/// As [`guaranteed_update`], for the server itself: `change` may set `deletionTimestamp`.
pub(crate) async fn system_update<F>(
    api: &Arc<Api>,
    res: &ResourceInfo,
    key: &str,
    name: &str,
    dry_run: bool,
    change: F,
) -> Result<Outcome>
where
    F: FnMut(&Value) -> Result<Value>,
{
    update_loop(api, res, key, name, dry_run, true, change).await
}

async fn update_loop<F>(
    api: &Arc<Api>,
    res: &ResourceInfo,
    key: &str,
    name: &str,
    dry_run: bool,
    system: bool,
    mut change: F,
) -> Result<Outcome>
where
    F: FnMut(&Value) -> Result<Value>,
{
    api.cache.sync().await?;
    for _ in 0..32 {
        let cur = api
            .cache
            .get(key)
            .ok_or_else(|| ApiError::not_found(target(res, name)))?;
        let stored = cur.value();
        // `change` works on the object as `res` serves it; it is stored in storage's shape.
        let mut old = crate::registry::storage::from_storage(res, stored.clone());
        // As kube-apiserver defaults what it reads from etcd: a default is never a change.
        crate::defaults::apply(res, &mut old);
        let mut new = change(&old)?;
        crate::defaults::on_update(res, &old, &mut new);
        crate::access::join::keep_requested_by(res, &old, &mut new);
        let cur_rv = cur.mod_revision.to_string();
        // A resourceVersion the change sets (a PUT's body, a patch naming one) is the client's
        // precondition. One the change merely kept from `old` (a patch without it) matches by
        // construction, and on a lost race below the change is applied again to the newer
        // object, as kube-apiserver's GuaranteedUpdate does.
        if let Some(rv) = meta_str(&new, "resourceVersion").filter(|rv| !rv.is_empty()) {
            if rv != cur_rv {
                return Err(ApiError::conflict(
                    target(res, name),
                    "the object has been modified; please apply your changes to the latest version and try again",
                ));
            }
        }
        // Fields only the server sets.
        let owned: &[&str] = if system {
            &["uid", "creationTimestamp", "name", "namespace"]
        } else {
            &[
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "name",
                "namespace",
            ]
        };
        for f in owned.iter().copied() {
            match old.pointer(&format!("/metadata/{f}")) {
                Some(v) => set_meta(&mut new, f, v.clone()),
                None => {
                    remove_meta(&mut new, f);
                }
            }
        }
        set_meta(&mut new, "resourceVersion", json!(cur_rv));
        match meta::generation::after_update(res, &old, &new) {
            Some(gen) => set_meta(&mut new, "generation", json!(gen)),
            None => {
                remove_meta(&mut new, "generation");
            }
        }
        crate::validation::check_update(res, &old, &new)?;
        let new = crate::registry::storage::to_storage(res, new);
        if new == stored {
            return Ok(Outcome::Unchanged(cur));
        }
        // Whatever produced it (a patch, an apply, a controller), refused if unreadable.
        crate::limits::check_storable(&new)?;
        let terminating = old.pointer("/metadata/deletionTimestamp").is_some();
        if dry_run {
            return Ok(Outcome::DryRun(new));
        }
        let result = if terminating
            && meta::finalizers(&new).is_empty()
            && !crate::lifecycle::has_spec_finalizers(res, &new)
        {
            api.store
                .delete(key, cur.mod_revision, render(new))
                .await
                .map(Outcome::Deleted)
        } else {
            api.store
                .update(key, cur.mod_revision, render(new))
                .await
                .map(Outcome::Written)
        };
        match result {
            Ok(o) => return Ok(o),
            Err(flotilla_store::Error::Conflict { .. }) => {
                api.cache.sync().await?;
                continue;
            }
            Err(flotilla_store::Error::NotFound { .. }) => {
                return Err(ApiError::not_found(target(res, name)))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::conflict(
        target(res, name),
        "too many concurrent writers; try again",
    ))
}

/// Respond with what an update produced.
pub(crate) fn outcome_response(res: &ResourceInfo, o: Outcome) -> Response<Body> {
    match o {
        Outcome::Written(r) | Outcome::Deleted(r) => response::raw(200, output_raw(res, &r.value)),
        Outcome::Unchanged(c) => response::raw(200, output(res, &c)),
        Outcome::DryRun(v) => response::json(200, &output_value(res, v)),
    }
}

/// What an update of `sub` may change: the main resource leaves status alone, the status
/// subresource changes only status (and, as in Kubernetes, nothing of metadata but
/// labels/annotations/finalizers/ownerReferences... none of them, in fact: only status).
pub(crate) fn merge_for_subresource(
    res: &ResourceInfo,
    sub: Option<&str>,
    old: &Value,
    mut new: Value,
) -> Value {
    match sub {
        None if res.status => {
            match old.get("status") {
                Some(s) => new["status"] = s.clone(),
                None => {
                    if let Some(o) = new.as_object_mut() {
                        o.remove("status");
                    }
                }
            }
            new
        }
        Some("status") => {
            let mut out = old.clone();
            match new.get("status") {
                Some(s) => out["status"] = s.clone(),
                None => {
                    if let Some(o) = out.as_object_mut() {
                        o.remove("status");
                    }
                }
            }
            if let Some(rv) = new.pointer("/metadata/resourceVersion") {
                set_meta(&mut out, "resourceVersion", rv.clone());
            }
            out
        }
        Some("finalize") => {
            let mut out = old.clone();
            out["spec"]["finalizers"] = new
                .pointer("/spec/finalizers")
                .cloned()
                .unwrap_or(json!([]));
            out
        }
        _ => new,
    }
}

/// PUT.
pub(super) async fn update(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
    sub: Option<&str>,
) -> Result<Response<Body>> {
    let mut obj = body_object(ctx, res)?;
    check_type(res, &mut obj)?;
    let key = object_key(ctx, res)?;
    let name = ctx.info.name.clone().unwrap_or_default();
    super::identity::check(res, &ctx.info, &obj)?;
    // Read-your-writes: an object created just before must be found.
    api.cache.sync().await?;
    if api.cache.get(&key).is_none() {
        return Err(not_found(ctx, res));
    }
    let warnings = api.validate(res, &mut obj, ctx.query.field_validation)?;
    let manager = ctx.field_manager();
    let outcome = guaranteed_update(api, res, &key, &name, ctx.query.dry_run, |old| {
        let mut new = merge_for_subresource(res, sub, old, obj.clone());
        // Defaults the update adds are the updater's, as in kube-apiserver's field manager.
        crate::defaults::on_update(res, old, &mut new);
        api.track_managed_fields(res, Some(old), &mut new, &manager, sub);
        api.access
            .admit_rbac_write(&api.cache, &ctx.user, &ctx.info, res, Some(old), &new)?;
        Ok(new)
    })
    .await?;
    Ok(response::with_warnings(
        outcome_response(res, outcome),
        &warnings,
    ))
}

/// PATCH (JSON patch, merge patch, strategic merge patch, server-side apply).
pub(super) async fn patch(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
    sub: Option<&str>,
) -> Result<Response<Body>> {
    let format = BodyFormat::from_content_type(ctx.content_type.as_deref())?;
    if !format.is_patch() {
        return Err(ApiError::unsupported_media_type(format!(
            "the body of the request was in an unknown format - accepted media types include: \
             application/json-patch+json, application/merge-patch+json, \
             application/apply-patch+yaml{}",
            if res.custom {
                ""
            } else {
                ", application/strategic-merge-patch+json"
            }
        )));
    }
    if format == BodyFormat::StrategicMergePatch && res.custom {
        return Err(ApiError::unsupported_media_type(
            "strategic merge patch is not supported for custom resources; use a merge patch \
             (--type merge) or a JSON patch (--type json)",
        ));
    }
    let patch = decode_body(format, &ctx.body)?;
    let key = object_key(ctx, res)?;
    let name = ctx.info.name.clone().unwrap_or_default();
    let manager = ctx.field_manager();
    if format == BodyFormat::ApplyPatch {
        return api
            .server_side_apply(ctx, res, sub, &key, &name, patch)
            .await;
    }
    // Read-your-writes: an object created just before must be found.
    api.cache.sync().await?;
    if api.cache.get(&key).is_none() {
        return Err(not_found(ctx, res));
    }
    let outcome = guaranteed_update(api, res, &key, &name, ctx.query.dry_run, |old| {
        let mut patched = api.apply_patch_document(res, format, old, &patch)?;
        super::identity::check(res, &ctx.info, &patched)?;
        api.validate(res, &mut patched, ctx.query.field_validation)?;
        let mut new = merge_for_subresource(res, sub, old, patched);
        if let Some(o) = new.as_object_mut() {
            o.insert("apiVersion".into(), old["apiVersion"].clone());
            o.insert("kind".into(), old["kind"].clone());
        }
        crate::defaults::on_update(res, old, &mut new);
        api.track_managed_fields(res, Some(old), &mut new, &manager, sub);
        api.access
            .admit_rbac_write(&api.cache, &ctx.user, &ctx.info, res, Some(old), &new)?;
        Ok(new)
    })
    .await?;
    Ok(outcome_response(res, outcome))
}

#[cfg(test)]
mod tests;
