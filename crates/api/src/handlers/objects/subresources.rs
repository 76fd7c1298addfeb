//! The subresources of pods, nodes and certificate signing requests beyond `status` and
//! `scale` (listed in `registry::builtin::subresources`).
//!
//! `pods/ephemeralcontainers` and `certificatesigningrequests/approval` are parts of the object
//! written like `/status` (what each may change is admission's: `admission::kinds`).
//! `pods/binding` assigns a pod to a node and `pods/eviction` deletes a pod, as kube-apiserver
//! does. `log`, `exec`, `attach`, `portforward` and `proxy` reach a kubelet in a cluster; the
//! hub runs none, so they answer a Status saying so.

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::{json, Value};

use super::{not_found, object_key, read, write, Ctx};
use crate::error::{ApiError, Result};
use crate::handlers::response;
use crate::objects::{self, DeleteOptions, Writer};
use crate::registry::ResourceInfo;
use crate::request::{decode_typed_body, BodyFormat, Expect};
use crate::Api;

/// Serve `verb` on subresource `sub` of `res` (one of its `extra_subresources`).
pub(super) async fn serve(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
    verb: &str,
    sub: &str,
) -> Result<Response<Body>> {
    let allowed = res
        .extra_subresources()
        .iter()
        .any(|s| s.name == sub && s.verbs.contains(&verb));
    if !allowed {
        return Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({verb} {}/{sub})",
            res.plural
        )));
    }
    match (verb, sub) {
        ("get", "ephemeralcontainers" | "approval") => read::get(api, ctx, res).await,
        ("update", "ephemeralcontainers" | "approval") => {
            write::update(api, ctx, res, Some(sub)).await
        }
        ("patch", "ephemeralcontainers" | "approval") => {
            write::patch(api, ctx, res, Some(sub)).await
        }
        ("create", "binding") => binding(api, ctx, res).await,
        ("create", "eviction") => eviction(api, ctx, res).await,
        _ => no_kubelet(api, ctx, res, sub).await,
    }
}

/// The body of a `create` on a subresource, as the kind it carries.
fn body(ctx: &Ctx, api_version: &str, kind: &str) -> Result<Value> {
    let format = BodyFormat::from_content_type(ctx.content_type.as_deref())?;
    let expect = Expect {
        api_version: Some(api_version),
        kind,
    };
    decode_typed_body(format, &ctx.body, expect)
}

/// kube-apiserver's answer to a subresource create that worked: a `Status` Success, 201.
fn created() -> Response<Body> {
    response::json(
        201,
        &json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    )
}

/// `pods/binding`: sets `spec.nodeName` of a pod not yet assigned (409 if it is).
async fn binding(api: &Arc<Api>, ctx: &Ctx, res: &ResourceInfo) -> Result<Response<Body>> {
    let b = body(ctx, "v1", "Binding")?;
    let name = ctx.info.name.clone().unwrap_or_default();
    let node = b
        .pointer("/target/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if node.is_empty() {
        return Err(ApiError::invalid(
            "Binding",
            &name,
            "",
            vec![("target.name".into(), "Required value".into())],
        ));
    }
    let key = object_key(ctx, res)?;
    objects::guaranteed_update(
        api,
        Writer::Server,
        res,
        &key,
        &name,
        ctx.query.dry_run,
        |old| {
            if old.pointer("/metadata/deletionTimestamp").is_some() {
                return Err(conflict(
                    res,
                    &name,
                    "pod is being deleted, cannot be assigned to a host",
                ));
            }
            let current = old.pointer("/spec/nodeName").and_then(Value::as_str);
            if let Some(current) = current.filter(|n| !n.is_empty()) {
                return Err(conflict(
                    res,
                    &name,
                    &format!("pod {name} is already assigned to node {current:?}"),
                ));
            }
            let mut new = old.clone();
            new["spec"]["nodeName"] = json!(node);
            Ok(new)
        },
    )
    .await?;
    Ok(created())
}

fn conflict(res: &ResourceInfo, name: &str, why: &str) -> ApiError {
    ApiError::conflict(
        crate::error::Target {
            group: &res.group,
            resource: &res.plural,
            name,
        },
        why,
    )
}

/// `pods/eviction`: deletes the pod (with the eviction's delete options' preconditions) when
/// its disruption budget allows ([`super::eviction`]).
async fn eviction(api: &Arc<Api>, ctx: &Ctx, res: &ResourceInfo) -> Result<Response<Body>> {
    let e = body(ctx, "policy/v1", "Eviction")?;
    let name = ctx.info.name.clone().unwrap_or_default();
    let key = object_key(ctx, res)?;
    api.cache.sync().await?;
    let Some(pod) = api.cache.get(&key).map(|p| p.value()) else {
        return Err(not_found(ctx, res));
    };
    let ns = ctx.info.object_namespace().unwrap_or_default();
    super::eviction::admit(api, ns, &pod, ctx.query.dry_run).await?;
    let text = |p: &str| e.pointer(p).and_then(Value::as_str).map(String::from);
    let opts = DeleteOptions {
        dry_run: ctx.query.dry_run
            || e.pointer("/deleteOptions/dryRun")
                .and_then(Value::as_array)
                .is_some_and(|d| !d.is_empty()),
        propagation: text("/deleteOptions/propagationPolicy"),
        precondition_uid: text("/deleteOptions/preconditions/uid"),
        precondition_rv: text("/deleteOptions/preconditions/resourceVersion"),
    };
    objects::delete_object(api, res, &key, &name, &opts).await?;
    Ok(created())
}

/// What reaches a kubelet: the hub has none. 404 for an object that does not exist, else 400
/// (a pod) or 503 (a node), as a cluster answers when no kubelet can be reached.
async fn no_kubelet(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
    sub: &str,
) -> Result<Response<Body>> {
    let key = object_key(ctx, res)?;
    api.cache.sync().await?;
    if api.cache.get(&key).is_none() {
        return Err(not_found(ctx, res));
    }
    let name = ctx.info.name.clone().unwrap_or_default();
    Err(if res.plural == "pods" {
        ApiError::bad_request(format!(
            "pod {name} does not have a host assigned: the flotilla hub stores pods and runs \
             none, so {sub} is served only by the member cluster that runs the pod"
        ))
    } else {
        ApiError::new(
            503,
            "ServiceUnavailable",
            format!(
                "no kubelet serves node {name:?} through the flotilla hub: use the member \
                 cluster's API server for {sub}"
            ),
        )
    })
}
