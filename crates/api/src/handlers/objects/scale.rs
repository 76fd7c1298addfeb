//! The `scale` subresource (autoscaling/v1 Scale), for built-in workloads and custom resources.

use std::sync::Arc;

use axum::body::Body;
use http::Response;
use serde_json::{json, Value};

use super::{not_found, object_key, Ctx};
use crate::admission::policy::admit_scale;
use crate::error::{ApiError, Result};
use crate::handlers::response;
use crate::objects::{guaranteed_update, Outcome, Writer};
use crate::registry::{ResourceInfo, ScaleSpec};
use crate::request::{decode_body, decode_typed_body, BodyFormat, Expect};
use crate::Api;

fn pointer(path: &str) -> String {
    path.trim_start_matches('.')
        .split('.')
        .fold(String::new(), |mut acc, p| {
            acc.push('/');
            acc.push_str(p);
            acc
        })
}

fn selector_string(spec: &ScaleSpec, obj: &Value) -> Option<String> {
    match spec.label_selector_path.as_deref() {
        Some("@selector") => {
            let sel = obj.pointer("/spec/selector")?;
            let mut parts: Vec<String> = sel
                .get("matchLabels")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                        .collect()
                })
                .unwrap_or_default();
            if let Some(exprs) = sel.get("matchExpressions").and_then(Value::as_array) {
                for e in exprs {
                    let key = e["key"].as_str().unwrap_or("");
                    let vals: Vec<&str> = e["values"]
                        .as_array()
                        .map(|a| a.iter().filter_map(Value::as_str).collect())
                        .unwrap_or_default();
                    parts.push(match e["operator"].as_str().unwrap_or("") {
                        "In" => format!("{key} in ({})", vals.join(",")),
                        "NotIn" => format!("{key} notin ({})", vals.join(",")),
                        "Exists" => key.to_string(),
                        _ => format!("!{key}"),
                    });
                }
            }
            Some(parts.join(","))
        }
        // A replication controller's selector is a label map (`registry::builtin::core_v1`).
        Some("@mapselector") => {
            let m = obj.pointer("/spec/selector")?.as_object()?;
            let parts: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect();
            Some(parts.join(","))
        }
        Some(p) => obj
            .pointer(&pointer(p))
            .and_then(Value::as_str)
            .map(String::from),
        None => None,
    }
}

fn to_scale(res: &ResourceInfo, spec: &ScaleSpec, obj: &Value) -> Value {
    let m = &obj["metadata"];
    let mut status = json!({
        "replicas": obj.pointer(&pointer(&spec.status_replicas_path)).and_then(Value::as_i64).unwrap_or(0),
    });
    if let Some(sel) = selector_string(spec, obj) {
        status["selector"] = json!(sel);
    }
    let _ = res;
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
            "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"],
        },
        "spec": {"replicas": obj.pointer(&pointer(&spec.spec_replicas_path)).and_then(Value::as_i64).unwrap_or(0)},
        "status": status,
    })
}

fn spec_of(res: &ResourceInfo) -> Result<&ScaleSpec> {
    res.scale
        .as_ref()
        .ok_or_else(|| ApiError::unknown_path("scale"))
}

/// GET …/scale.
pub(super) async fn get(api: &Arc<Api>, ctx: &Ctx, res: &ResourceInfo) -> Result<Response<Body>> {
    super::read::fresh_enough(api, ctx.query.resource_version.as_deref()).await?;
    let o = api
        .cache
        .get(&object_key(ctx, res)?)
        .ok_or_else(|| not_found(ctx, res))?;
    Ok(response::json(
        200,
        &to_scale(res, spec_of(res)?, &o.value()),
    ))
}

async fn write_replicas(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
    mut desired: impl FnMut(&Value) -> Result<(i64, Option<String>)>,
) -> Result<Response<Body>> {
    let spec = spec_of(res)?.clone();
    let key = object_key(ctx, res)?;
    let name = ctx.info.name.clone().unwrap_or_default();
    api.cache.sync().await?;
    if api.cache.get(&key).is_none() {
        return Err(not_found(ctx, res));
    }
    let outcome = guaranteed_update(
        api,
        Writer::Client,
        res,
        &key,
        &name,
        ctx.query.dry_run,
        |old| {
            let (replicas, rv) = desired(&to_scale(res, &spec, old))?;
            if replicas < 0 {
                return Err(ApiError::invalid(
                    "Scale",
                    &name,
                    "autoscaling",
                    vec![(
                        "spec.replicas".into(),
                        format!("Invalid value: {replicas}: must be greater than or equal to 0"),
                    )],
                ));
            }
            let mut new = old.clone();
            let p = pointer(&spec.spec_replicas_path);
            let (parent, leaf) = p.rsplit_once('/').unwrap_or(("", "replicas"));
            match new.pointer_mut(parent) {
                Some(Value::Object(m)) => {
                    m.insert(leaf.to_string(), json!(replicas));
                }
                _ => {
                    return Err(ApiError::internal(format!(
                        "object has no {parent} to scale"
                    )))
                }
            }
            if let Some(rv) = rv {
                crate::meta::set_meta(&mut new, "resourceVersion", json!(rv));
            }
            let (old_scale, new_scale) = (to_scale(res, &spec, old), to_scale(res, &spec, &new));
            let (user, info, dry_run) = (&ctx.user, &ctx.info, ctx.query.dry_run);
            admit_scale(api, user, info, res, &old_scale, &new_scale, dry_run)?;
            Ok(new)
        },
    )
    .await?;
    let obj = match outcome {
        Outcome::Written(r) | Outcome::Deleted(r) => {
            serde_json::from_slice(&r.value).unwrap_or(Value::Null)
        }
        Outcome::Unchanged(c) => c.value(),
        Outcome::DryRun(v) => v,
    };
    Ok(response::json(200, &to_scale(res, &spec, &obj)))
}

/// PUT …/scale.
pub(super) async fn update(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
) -> Result<Response<Body>> {
    let body = decode_typed_body(
        BodyFormat::from_content_type(ctx.content_type.as_deref())?,
        &ctx.body,
        Expect {
            api_version: Some("autoscaling/v1"),
            kind: "Scale",
        },
    )?;
    let replicas = body
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let rv = body
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .map(String::from);
    write_replicas(api, ctx, res, |_| Ok((replicas, rv.clone()))).await
}

/// PATCH …/scale (kubectl scale sends a merge patch of the Scale).
pub(super) async fn patch(api: &Arc<Api>, ctx: &Ctx, res: &ResourceInfo) -> Result<Response<Body>> {
    let format = BodyFormat::from_content_type(ctx.content_type.as_deref())?;
    let patch = decode_body(format, &ctx.body)?;
    write_replicas(api, ctx, res, |scale| {
        let patched = api.schemas.patch(res, format, scale, &patch)?;
        let replicas = patched
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let rv = patch
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .map(String::from);
        Ok((replicas, rv))
    })
    .await
}
