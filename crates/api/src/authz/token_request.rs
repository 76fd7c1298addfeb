//! `POST …/serviceaccounts/NAME/token` (TokenRequest): what `kubectl create token` calls.

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::{json, Value};

use super::tokens::{
    Claims, KubernetesClaim, Ref, DEFAULT_EXPIRATION_SECONDS, MAX_EXPIRATION_SECONDS,
    MIN_EXPIRATION_SECONDS,
};
use crate::error::{ApiError, Result, Target};
use crate::handlers::{response, Ctx};
use crate::request::{decode_body, BodyFormat};
use crate::Api;

/// Issue a token for the service account the request names.
pub async fn serve(api: &Arc<Api>, ctx: &Ctx) -> Result<Response<Body>> {
    let ns = ctx.info.namespace.clone().unwrap_or_default();
    let name = ctx.info.name.clone().unwrap_or_default();
    api.cache.sync().await?;
    let sa = api
        .cache
        .get(&format!("/registry/core/serviceaccounts/{ns}/{name}"))
        .ok_or_else(|| {
            ApiError::not_found(Target {
                group: "",
                resource: "serviceaccounts",
                name: &name,
            })
        })?
        .value();
    let body: Value = if ctx.body.is_empty() {
        json!({})
    } else {
        decode_body(
            BodyFormat::from_content_type(ctx.content_type.as_deref())?,
            &ctx.body,
        )?
    };
    let requested = body
        .pointer("/spec/expirationSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    if requested < MIN_EXPIRATION_SECONDS {
        return Err(ApiError::invalid("TokenRequest", &name, "authentication.k8s.io", vec![(
            "spec.expirationSeconds".into(),
            format!("Invalid value: {requested}: may not specify a duration less than {MIN_EXPIRATION_SECONDS} seconds"),
        )]));
    }
    let expiration = requested.min(MAX_EXPIRATION_SECONDS);
    let issuer = api.access.signer.issuer().to_string();
    let audiences: Vec<String> = body
        .pointer("/spec/audiences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .filter(|a: &Vec<String>| !a.is_empty())
        .unwrap_or_else(|| vec![issuer.clone()]);
    let now = chrono::Utc::now().timestamp();
    let claims = Claims {
        iss: issuer,
        sub: format!("system:serviceaccount:{ns}:{name}"),
        aud: audiences.clone(),
        exp: now + expiration,
        iat: now,
        nbf: now,
        jti: uuid::Uuid::new_v4().to_string(),
        kubernetes: KubernetesClaim {
            namespace: ns.clone(),
            serviceaccount: Ref {
                name: name.clone(),
                uid: sa
                    .pointer("/metadata/uid")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            },
        },
    };
    let token = api.access.signer.sign(&claims);
    let exp = chrono::DateTime::from_timestamp(claims.exp, 0)
        .unwrap_or_default()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    tracing::info!(serviceaccount = %claims.sub, expires = %exp, "issued a service-account token");
    Ok(response::json(
        201,
        &json!({
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": null},
            "spec": {"audiences": audiences, "expirationSeconds": expiration, "boundObjectRef": body.pointer("/spec/boundObjectRef").cloned()},
            "status": {"token": token, "expirationTimestamp": exp},
        }),
    ))
}
