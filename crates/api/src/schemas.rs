//! The schema-driven operations handlers need — validation, patching, server-side apply,
//! managedFields, OpenAPI documents — behind one handle, so handlers don't care whether a kind
//! is built in or comes from a CRD.

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::Value;

use crate::error::{ApiError, Result};
use crate::handlers::Ctx;
use crate::registry::{ResourceInfo, Snapshot};
use crate::request::{BodyFormat, FieldValidation};
use crate::Api;

/// Schemas of every served kind.
#[derive(Default)]
pub struct Schemas {}

impl Schemas {
    /// Schemas of the built-in kinds.
    pub fn new() -> Schemas {
        Schemas {}
    }

    /// Validate against the kind's schema; unknown fields per `level`.
    pub fn validate(&self, res: &ResourceInfo, obj: &mut Value, level: FieldValidation) -> Result<Vec<String>> {
        let _ = (res, obj, level);
        Ok(Vec::new())
    }

    /// Record field ownership of a non-apply write.
    pub fn track_update(&self, res: &ResourceInfo, old: Option<&Value>, new: &mut Value, manager: &str, sub: Option<&str>) {
        let _ = (res, old, new, manager, sub);
    }

    /// Apply a patch document.
    pub fn patch(&self, res: &ResourceInfo, format: BodyFormat, old: &Value, patch: &Value) -> Result<Value> {
        let _ = res;
        match format {
            BodyFormat::MergePatch => Ok(merge(old.clone(), patch)),
            _ => Err(ApiError::unsupported_media_type("this patch type is not supported yet")),
        }
    }

    /// `/openapi/v2`.
    pub fn openapi_v2(&self, snap: &Snapshot, accept: Option<&str>) -> Result<Response<Body>> {
        let _ = (snap, accept);
        Err(ApiError::unknown_path("/openapi/v2"))
    }

    /// `/openapi/v3`.
    pub fn openapi_v3_index(&self, snap: &Snapshot) -> Result<Response<Body>> {
        let _ = snap;
        Err(ApiError::unknown_path("/openapi/v3"))
    }

    /// `/openapi/v3/<gv>`.
    pub fn openapi_v3(&self, snap: &Snapshot, path: &str) -> Result<Response<Body>> {
        let _ = snap;
        Err(ApiError::unknown_path(path))
    }

    /// Replace the set of CRD schemas.
    pub fn set_crds(&self, crds: &[Value]) {
        let _ = crds;
    }
}

fn merge(mut target: Value, patch: &Value) -> Value {
    match patch {
        Value::Object(p) => {
            if !target.is_object() {
                target = Value::Object(Default::default());
            }
            for (k, v) in p {
                if v.is_null() {
                    if let Some(t) = target.as_object_mut() {
                        t.remove(k);
                    }
                } else {
                    let cur = target.get(k).cloned().unwrap_or(Value::Null);
                    target[k.as_str()] = merge(cur, v);
                }
            }
            target
        }
        other => other.clone(),
    }
}

/// Server-side apply of `patch` to the object at `key`.
pub async fn serve_apply(api: &Arc<Api>, ctx: &Ctx, res: &ResourceInfo, sub: Option<&str>, key: &str, name: &str, patch: Value) -> Result<Response<Body>> {
    let _ = (api, ctx, res, sub, key, name, patch);
    Err(ApiError::unsupported_media_type("server-side apply is not supported yet"))
}
