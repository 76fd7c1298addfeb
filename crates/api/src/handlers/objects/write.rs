//! POST, PUT and PATCH (server-side apply included): decode the body, let the write engine
//! ([`crate::objects`]) do the write, encode what it answers.

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::Value;

use super::{output, output_value, output_written, Ctx};
use crate::admission::schema::fields;
use crate::error::{ApiError, Result};
use crate::handlers::response;
use crate::objects::{self, Outcome, Write, Written};
use crate::registry::ResourceInfo;
use crate::request::{decode_body, decode_typed_body, strict, BodyFormat, Expect};
use crate::request::{FieldValidation, Query};
use crate::Api;

/// The engine's view of this request's write. `query` is the request's, with the field
/// validation the engine is left to do: a create's, update's and apply's body is judged here
/// ([`judged_body`], [`judged_apply`]), the engine then only drops unknown fields.
fn write<'a>(
    ctx: &'a Ctx,
    query: &'a Query,
    res: &'a ResourceInfo,
    sub: Option<&'a str>,
    body_errors: Vec<String>,
) -> Write<'a> {
    Write {
        res,
        sub,
        info: &ctx.info,
        query,
        user: &ctx.user,
        manager: ctx.field_manager(),
        body_errors,
    }
}

/// The request's query with field validation done (Ignore for the engine).
fn validated(ctx: &Ctx) -> Query {
    Query {
        field_validation: FieldValidation::Ignore,
        ..ctx.query.clone()
    }
}

/// A create's or update's body, judged for duplicate and unknown fields at the request's
/// `fieldValidation`: the object and the warnings, or 400 (Strict).
fn judged_body(api: &Api, ctx: &Ctx, res: &ResourceInfo) -> Result<(Value, Vec<String>)> {
    let obj = body_object(ctx, res)?;
    if ctx.query.field_validation == FieldValidation::Ignore {
        return Ok((obj, Vec::new()));
    }
    let format = BodyFormat::from_content_type(ctx.content_type.as_deref())?;
    let errors = fields::body_errors(&api.schemas, res, format, &ctx.body, &obj);
    let warnings = fields::judge(ctx.query.field_validation, errors)?;
    Ok((obj, warnings))
}

/// A server-side apply's configuration judged as kube-apiserver judges it: fields its schema
/// does not declare are refused whatever the `fieldValidation`; duplicate keys are refused
/// (Strict, 400) or warned about (Warn), in the YAML library's words.
fn judged_apply(api: &Api, ctx: &Ctx, res: &ResourceInfo, patch: &Value) -> Result<Vec<String>> {
    let name = ctx.info.name.as_deref().unwrap_or_default();
    fields::undeclared_error(&api.schemas, res, ctx.info.object_namespace(), name, patch)?;
    let level = ctx.query.field_validation;
    if level == FieldValidation::Ignore {
        return Ok(Vec::new());
    }
    let Some(dups) = std::str::from_utf8(&ctx.body)
        .ok()
        .and_then(strict::yaml_duplicates)
    else {
        return Ok(Vec::new());
    };
    let error = format!("error converting YAML to JSON: {dups}");
    if level == FieldValidation::Strict {
        return Err(ApiError::bad_request(format!(
            "error strict decoding YAML: {error}"
        )));
    }
    Ok(strict::yaml_warnings(&error))
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
    let (obj, warnings) = judged_body(api, ctx, res)?;
    let query = validated(ctx);
    let w = write(ctx, &query, res, None, Vec::new());
    let written = scoped(ctx, warnings, objects::create(api, &w, obj)).await?;
    Ok(written_response(api, res, written))
}

/// PUT.
pub(super) async fn update(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
    sub: Option<&str>,
) -> Result<Response<Body>> {
    let (obj, warnings) = judged_body(api, ctx, res)?;
    let query = validated(ctx);
    let w = write(ctx, &query, res, sub, Vec::new());
    let written = scoped(ctx, warnings, objects::update(api, &w, obj)).await?;
    Ok(written_response(api, res, written))
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
    let written = if format == BodyFormat::ApplyPatch {
        let warnings = judged_apply(api, ctx, res, &patch)?;
        let query = validated(ctx);
        let w = write(ctx, &query, res, sub, Vec::new());
        scoped(ctx, warnings, objects::apply(api, &w, patch)).await?
    } else {
        // The patched object's unknown fields are the engine's to find; the patch's own
        // duplicates are reported with them.
        let body_errors = match ctx.query.field_validation {
            FieldValidation::Ignore => Vec::new(),
            _ => fields::patch_body_errors(format, &ctx.body),
        };
        let w = write(ctx, &ctx.query, res, sub, body_errors);
        scoped(ctx, Vec::new(), objects::patch(api, &w, format, patch)).await?
    };
    Ok(written_response(api, res, written))
}

/// Run a write in admission's scope of this request (its dry run; the warnings admission
/// raises, added to the write's own after the body's `first`).
async fn scoped(
    ctx: &Ctx,
    first: Vec<String>,
    write: impl std::future::Future<Output = Result<Written>>,
) -> Result<Written> {
    let (written, warnings) = crate::admission::scope::run(ctx.query.dry_run, write).await;
    let mut written = written?;
    let mut all = first;
    all.append(&mut written.warnings);
    all.extend(warnings);
    written.warnings = all;
    Ok(written)
}

/// Respond with what a write produced: 201 if it created the object, with its warnings.
fn written_response(api: &Api, res: &ResourceInfo, written: Written) -> Response<Body> {
    let mut r = outcome_response(api, res, written.outcome);
    if written.created {
        *r.status_mut() = http::StatusCode::CREATED;
    }
    response::with_warnings(r, &written.warnings)
}

/// Respond with what an update produced.
pub(crate) fn outcome_response(api: &Api, res: &ResourceInfo, o: Outcome) -> Response<Body> {
    match o {
        Outcome::Written(r) | Outcome::Deleted(r) => {
            response::raw(200, output_written(api, res, &r.key, &r.value))
        }
        Outcome::Unchanged(c) => response::raw(200, output(res, &c)),
        Outcome::DryRun(v) => response::json(200, &output_value(res, v)),
    }
}
