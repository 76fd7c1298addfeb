//! DELETE and deletecollection: decode the options, let the engine delete, encode the answer.

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::{json, Value};

use super::write::outcome_response;
use super::{not_found, object_key, output, Ctx, Filter};
use crate::admission;
use crate::error::{ApiError, Result};
use crate::handlers::response;
use crate::objects::{delete_object, DeleteOptions};
use crate::registry::ResourceInfo;
use crate::request::{decode_typed_body, BodyFormat, Expect};
use crate::Api;

/// `DeleteOptions` from the query and the (optional) body.
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
    let Some(cur) = api.cache.get(&key) else {
        return Err(not_found(ctx, res));
    };
    let warnings = admission::policy::admit_delete(
        api,
        &ctx.user,
        &ctx.info,
        res,
        &cur.value(),
        opts.dry_run,
    )?;
    admission::kinds::admit_delete(res, &name)?;
    let outcome = delete_object(api, res, &key, &name, &opts).await?;
    Ok(response::with_warnings(
        outcome_response(api, res, outcome),
        &warnings,
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
    let mut warnings = Vec::new();
    for o in items {
        warnings.extend(admission::policy::admit_delete(
            api,
            &ctx.user,
            &ctx.info,
            res,
            &o.value(),
            opts.dry_run,
        )?);
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
    let list = response::json(
        200,
        &json!({
            "kind": format!("{}List", res.kind), "apiVersion": res.api_version(),
            "metadata": {"resourceVersion": api.cache.revision().to_string()}, "items": items,
        }),
    );
    Ok(response::with_warnings(list, &warnings))
}
