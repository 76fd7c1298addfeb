//! `POST` of an access review or TokenReview (`kubectl auth can-i`, `auth whoami`): decode the
//! review, let [`crate::access::reviews`] answer it, and return it with its status (201). These
//! resources store nothing and serve no other verb (405, as kube-apiserver answers).

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::json;

use super::Ctx;
use crate::access::reviews::Review;
use crate::error::{ApiError, Result};
use crate::handlers::response;
use crate::request::{decode_typed_body, BodyFormat, Expect};
use crate::Api;

/// Answer a request on the review resource `review`.
pub(super) async fn serve(api: &Arc<Api>, ctx: &Ctx, review: Review) -> Result<Response<Body>> {
    if ctx.info.verb != "create" || ctx.info.subresource.is_some() || ctx.info.name.is_some() {
        return Err(ApiError::method_not_allowed(format!(
            "the server does not allow this method on the requested resource ({})",
            ctx.info.verb
        )));
    }
    let format = BodyFormat::from_content_type(ctx.content_type.as_deref())?;
    if format.is_patch() {
        return Err(ApiError::unsupported_media_type(
            "a patch content type was sent with a create; reviews are created with POST",
        ));
    }
    let api_version = review.api_version();
    let body = if ctx.body.is_empty() {
        json!({})
    } else {
        decode_typed_body(
            format,
            &ctx.body,
            Expect {
                api_version: Some(&api_version),
                kind: review.kind(),
            },
        )?
    };
    let kind = body.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    if !kind.is_empty() && kind != review.kind() {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            review.kind()
        )));
    }
    let answer = api
        .access
        .review(
            &api.cache,
            review,
            &ctx.user,
            ctx.info.namespace.as_deref(),
            body,
        )
        .await?;
    Ok(response::json(201, &answer))
}
