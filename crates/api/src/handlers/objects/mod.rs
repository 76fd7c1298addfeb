//! Handlers for objects: get, list, watch, create, update, patch, delete, deletecollection, and
//! the `status`, `scale` and `serviceaccounts/token` subresources. Writes decode the request,
//! call the write engine ([`crate::objects`]) and encode its answer.

mod delete;
pub(crate) mod encode;
mod eviction;
pub(crate) mod filter;
pub(crate) mod lean;
mod read;
mod review;
mod scale;
mod subresources;
mod token;
mod write;

use std::sync::Arc;

use axum::body::Body;
use http::Response;

use super::Ctx;
use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;
use crate::Api;

pub(crate) use encode::{output, output_value, output_written};
pub(crate) use filter::Filter;

/// Route a resource request.
pub(super) async fn dispatch(api: &Arc<Api>, mut ctx: Ctx) -> Result<Response<Body>> {
    let snap = api.registry.snapshot();
    let res = snap
        .get(&ctx.info.group, &ctx.info.version, &ctx.info.resource)
        .cloned()
        .ok_or_else(|| ApiError::unknown_path(&ctx.info.path))?;
    // Authorization used the path's namespace; what is served must be in that same scope. A
    // cluster-scoped resource under `namespaces/{ns}/` does not exist there (kube-apiserver
    // answers 404), whichever kind it is — namespaces included.
    if !res.namespaced && ctx.info.namespaced_path {
        return Err(ApiError::unknown_path(&ctx.info.path));
    }
    let ns = ctx.info.object_namespace();
    if res.namespaced && ns.is_none() && !matches!(ctx.info.verb.as_str(), "list" | "watch") {
        return Err(ApiError::unknown_path(&ctx.info.path));
    }
    if matches!(ctx.info.verb.as_str(), "list" | "watch") {
        let accept = ctx.accept.as_deref();
        ctx.want = super::list_options::prepare(&mut ctx.query, accept, res.custom)?;
    }
    // A resource that is only created, never stored (the reviews), has no Table form: as
    // kube-apiserver, a request that accepts nothing else is refused (406).
    if !res.verbs.contains(&"get") {
        ctx.want = super::list_options::without_table(ctx.accept.as_deref(), res.custom)?;
    }
    // Access reviews and TokenReviews are answered, never stored.
    if let Some(review) = crate::access::reviews::Review::of(&res.group, &res.plural) {
        return review::serve(api, &ctx, review).await;
    }
    let sub = ctx.info.subresource.clone();
    let named = ctx.info.name.is_some();
    match (ctx.info.verb.as_str(), sub.as_deref()) {
        ("get", None) => read::get(api, &ctx, &res).await,
        ("list", None) => read::list(api, &ctx, &res).await,
        ("watch", None) => super::watch::watch(api, &ctx, &res).await,
        // A create goes to the collection: `POST …/configmaps/foo` is not a route, as in
        // kube-apiserver (it would be authorized for `foo` and create whatever the body names).
        ("create", None) if named => Err(ApiError::method_not_allowed(
            "the server does not allow this method on the requested resource",
        )),
        ("create", None) => write::create(api, &ctx, &res).await,
        ("update", None) => write::update(api, &ctx, &res, None).await,
        ("patch", None) => write::patch(api, &ctx, &res, None).await,
        ("delete", None) => delete::delete(api, &ctx, &res).await,
        ("deletecollection", None) => delete::delete_collection(api, &ctx, &res).await,
        ("get", Some("status")) if res.status => read::get(api, &ctx, &res).await,
        ("update", Some("status")) if res.status => {
            write::update(api, &ctx, &res, Some("status")).await
        }
        ("patch", Some("status")) if res.status => {
            write::patch(api, &ctx, &res, Some("status")).await
        }
        ("update", Some("finalize")) if res.plural == "namespaces" && !res.custom => {
            write::update(api, &ctx, &res, Some("finalize")).await
        }
        ("get", Some("scale")) if res.scale.is_some() => scale::get(api, &ctx, &res).await,
        ("update", Some("scale")) if res.scale.is_some() => scale::update(api, &ctx, &res).await,
        ("patch", Some("scale")) if res.scale.is_some() => scale::patch(api, &ctx, &res).await,
        ("create", Some("token")) if res.plural == "serviceaccounts" && !res.custom => {
            token::create(api, &ctx, &res).await
        }
        (verb, Some(s)) if res.extra_subresources().iter().any(|x| x.name == s) => {
            subresources::serve(api, &ctx, &res, verb, s).await
        }
        (verb, Some(s)) => Err(ApiError::unknown_path(&format!(
            "{} ({verb} {s})",
            ctx.info.path
        ))),
        (verb, None) => Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({verb})"
        ))),
    }
}

/// The storage key of the object a request names.
pub(crate) fn object_key(ctx: &Ctx, res: &ResourceInfo) -> Result<String> {
    crate::objects::object_key(&ctx.info, res)
}

/// The `not found` error for the object a request names.
pub(crate) fn not_found(ctx: &Ctx, res: &ResourceInfo) -> ApiError {
    ApiError::not_found(crate::error::Target {
        group: &res.group,
        resource: &res.plural,
        name: ctx.info.name.as_deref().unwrap_or(""),
    })
}
