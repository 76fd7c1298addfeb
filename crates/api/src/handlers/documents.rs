//! The documents the hub publishes about itself: OpenAPI v2 (JSON or gnostic protobuf) and v3,
//! and the OIDC discovery document and keys that verify its service-account tokens.

use axum::body::Body;
use http::Response;

use super::response;
use crate::error::Result;
use crate::Api;

/// `/openapi/v2`: JSON, or gnostic protobuf when the client asks for it.
pub(super) fn openapi_v2(api: &Api, accept: Option<&str>) -> Result<Response<Body>> {
    let wants_pb = accept.is_some_and(|a| {
        crate::protobuf::OPENAPI_V2_PROTOBUF_MEDIA_TYPES
            .iter()
            .any(|t| a.contains(t))
    });
    if !wants_pb {
        return Ok(response::raw(200, api.schemas.openapi_v2_json()));
    }
    Ok(response::raw_typed(
        200,
        api.schemas.openapi_v2_protobuf()?,
        crate::protobuf::OPENAPI_V2_PROTOBUF_CONTENT_TYPE,
    ))
}

/// `/openapi/v3`.
pub(super) fn openapi_v3_index(api: &Api) -> Result<Response<Body>> {
    Ok(response::raw(200, api.schemas.openapi_v3_index()))
}

/// `/openapi/v3/<gv>`.
pub(super) fn openapi_v3(api: &Api, path: &str) -> Result<Response<Body>> {
    Ok(response::raw(200, api.schemas.openapi_v3(path)?))
}

/// `/.well-known/openid-configuration`: where to find the keys that verify the hub's
/// service-account tokens, for verifiers that discover them by issuer.
pub(super) fn oidc_discovery(api: &Api) -> Result<Response<Body>> {
    Ok(response::json(
        200,
        &api.access.authority().openid_configuration(None),
    ))
}

/// `/openid/v1/jwks`: the public keys that verify service-account tokens.
pub(super) fn oidc_jwks(api: &Api) -> Result<Response<Body>> {
    let body = serde_json::to_vec(&api.access.authority().jwks()).unwrap_or_default();
    Ok(response::raw_typed(
        200,
        body.into(),
        "application/jwk-set+json",
    ))
}
