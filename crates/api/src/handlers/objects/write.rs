//! POST, PUT and PATCH (server-side apply included): decode the body, let the write engine
//! ([`crate::objects`]) do the write, encode what it answers.

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::Value;

use super::{output, output_raw, output_value, Ctx};
use crate::error::{ApiError, Result};
use crate::handlers::response;
use crate::objects::{self, Outcome, Write, Written};
use crate::registry::ResourceInfo;
use crate::request::{decode_body, decode_typed_body, BodyFormat, Expect};
use crate::Api;

/// The engine's view of this request's write.
fn write<'a>(ctx: &'a Ctx, res: &'a ResourceInfo, sub: Option<&'a str>) -> Write<'a> {
    Write {
        res,
        sub,
        info: &ctx.info,
        query: &ctx.query,
        user: &ctx.user,
        manager: ctx.field_manager(),
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

/// POST: create an object.
pub(super) async fn create(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
) -> Result<Response<Body>> {
    let obj = body_object(ctx, res)?;
    let written = scoped(ctx, objects::create(api, &write(ctx, res, None), obj)).await?;
    Ok(written_response(res, written))
}

/// PUT.
pub(super) async fn update(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
    sub: Option<&str>,
) -> Result<Response<Body>> {
    let obj = body_object(ctx, res)?;
    let written = scoped(ctx, objects::update(api, &write(ctx, res, sub), obj)).await?;
    Ok(written_response(res, written))
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
    let w = write(ctx, res, sub);
    let written = if format == BodyFormat::ApplyPatch {
        scoped(ctx, objects::apply(api, &w, patch)).await?
    } else {
        scoped(ctx, objects::patch(api, &w, format, patch)).await?
    };
    Ok(written_response(res, written))
}

/// Run a write in admission's scope of this request (its dry run; the warnings admission
/// raises, added to the write's own).
async fn scoped(
    ctx: &Ctx,
    write: impl std::future::Future<Output = Result<Written>>,
) -> Result<Written> {
    let (written, warnings) = crate::admission::scope::run(ctx.query.dry_run, write).await;
    let mut written = written?;
    written.warnings.extend(warnings);
    Ok(written)
}

/// Respond with what a write produced: 201 if it created the object, with its warnings.
fn written_response(res: &ResourceInfo, written: Written) -> Response<Body> {
    let mut r = outcome_response(res, written.outcome);
    if written.created {
        *r.status_mut() = http::StatusCode::CREATED;
    }
    response::with_warnings(r, &written.warnings)
}

/// Respond with what an update produced.
pub(crate) fn outcome_response(res: &ResourceInfo, o: Outcome) -> Response<Body> {
    match o {
        Outcome::Written(r) | Outcome::Deleted(r) => response::raw(200, output_raw(res, &r.value)),
        Outcome::Unchanged(c) => response::raw(200, output(res, &c)),
        Outcome::DryRun(v) => response::json(200, &output_value(res, v)),
    }
}
