//! `POST …/serviceaccounts/NAME/token` (TokenRequest): what `kubectl create token` calls.
//!
//! The request is checked against the store — the service account, and the object the token is
//! to be bound to, must exist — and the token is issued by the hub's
//! [`TokenAuthority`](crate::auth::TokenAuthority), which applies Kubernetes' rules for lifetime
//! and audiences. The answer is the TokenRequest with the token in `status`.

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::{json, Map, Value};

use super::{not_found, object_key, Ctx};
use crate::auth::token::{Binding, ObjectRef, TokenRequest};
use crate::error::{ApiError, Result, Target};
use crate::handlers::response;
use crate::registry::ResourceInfo;
use crate::request::{decode_typed_body, BodyFormat, Expect};
use crate::Api;

/// Issue a token for the service account the request names.
pub(super) async fn create(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
) -> Result<Response<Body>> {
    let ns = ctx.info.namespace.clone().unwrap_or_default();
    let name = ctx.info.name.clone().unwrap_or_default();
    api.cache.sync().await?;
    let sa = api
        .cache
        .get(&object_key(ctx, res)?)
        .ok_or_else(|| not_found(ctx, res))?
        .value();
    let body: Value = if ctx.body.is_empty() {
        json!({})
    } else {
        decode_typed_body(
            BodyFormat::from_content_type(ctx.content_type.as_deref())?,
            &ctx.body,
            Expect {
                api_version: Some("authentication.k8s.io/v1"),
                kind: "TokenRequest",
            },
        )?
    };
    let spec = body.get("spec").unwrap_or(&Value::Null);
    let bound_ref = spec.get("boundObjectRef").filter(|r| !r.is_null());
    let request = TokenRequest {
        namespace: ns.clone(),
        service_account: ObjectRef {
            name: name.clone(),
            uid: uid_of(&sa),
        },
        audiences: audiences(spec)?,
        expiration_seconds: match spec.get("expirationSeconds") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_i64().ok_or_else(|| {
                ApiError::bad_request("spec.expirationSeconds must be an integer number of seconds")
            })?),
        },
        binding: bound_ref.map(|r| binding(api, &ns, &name, r)).transpose()?,
    };
    let issued = api
        .access
        .authority()
        .issue(&request, chrono::Utc::now())
        .map_err(|e| ApiError::token_request(&name, e))?;
    let claims = &issued.claims;
    tracing::info!(
        serviceaccount = %claims.subject,
        expires = %claims.expiration(),
        "issued a service account token"
    );
    let mut out_spec = Map::new();
    out_spec.insert("audiences".into(), json!(claims.audiences));
    out_spec.insert(
        "expirationSeconds".into(),
        json!(claims.expires_at - claims.issued_at),
    );
    if let Some(r) = bound_ref {
        out_spec.insert("boundObjectRef".into(), r.clone());
    }
    Ok(response::json(
        201,
        &json!({
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": ns, "creationTimestamp": null},
            "spec": out_spec,
            "status": issued.status(),
        }),
    ))
}

fn uid_of(object: &Value) -> String {
    object
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// `spec.audiences`: absent or empty means the hub's own.
fn audiences(spec: &Value) -> Result<Vec<String>> {
    match spec.get("audiences") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| a.as_str().map(String::from))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| ApiError::bad_request("spec.audiences must be a list of strings")),
        Some(_) => Err(ApiError::bad_request(
            "spec.audiences must be a list of strings",
        )),
    }
}

/// Resolve `spec.boundObjectRef` against the store, as kube-apiserver does: the object must
/// exist in the service account's namespace, and match the uid the reference gives, if any.
/// Only Secrets can be bound: the hub stores no pods or nodes.
fn binding(api: &Arc<Api>, ns: &str, sa_name: &str, r: &Value) -> Result<Binding> {
    let field = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or("");
    let (kind, api_version, name, uid) = (
        field("kind"),
        field("apiVersion"),
        field("name"),
        field("uid"),
    );
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let version = api_version.rsplit_once('/').map_or(api_version, |(_, v)| v);
    if (group, kind) != ("", "Secret") {
        // Go's GroupVersionKind.String(), as in Kubernetes' message.
        let gvk = format!("{group}/{version}, Kind={kind}");
        let hint = match kind {
            "Pod" | "Node" => "; the hub runs no pods or nodes: bind the token to a Secret instead",
            _ => "; only Secrets can be bound",
        };
        return Err(ApiError::bad_request(format!(
            "cannot bind token for serviceaccount {sa_name:?} to object of type {gvk:?}{hint}"
        )));
    }
    if name.is_empty() {
        return Err(ApiError::bad_request(
            "spec.boundObjectRef.name: Required value: the Secret to bind the token to",
        ));
    }
    let secrets = api
        .registry
        .snapshot()
        .get("", "v1", "secrets")
        .cloned()
        .ok_or_else(|| ApiError::internal("secrets are not served"))?;
    let target = Target {
        group: "",
        resource: "secrets",
        name,
    };
    let secret = api
        .cache
        .get(&secrets.key(Some(ns), name))
        .ok_or_else(|| ApiError::not_found(target.clone()))?
        .value();
    let actual = uid_of(&secret);
    if !uid.is_empty() && uid != actual {
        return Err(ApiError::conflict(
            Target {
                resource: kind,
                ..target
            },
            &format!(
                "the UID in the bound object reference ({uid}) does not match the UID in \
                 record. The object might have been deleted and then recreated"
            ),
        ));
    }
    Ok(Binding::Secret(ObjectRef {
        name: name.to_string(),
        uid: actual,
    }))
}
