//! Server-side apply: create the object when absent, otherwise merge the client's
//! configuration into it by field ownership (409 with the conflicting fields unless `force`).

use std::sync::Arc;

use serde_json::{json, Value};

use super::update::client_update;
use super::{commit_create, target, Write, Written};
use crate::admission::{self, identity};
use crate::apply::{Applier, ApplyError};
use crate::error::{ApiError, Result};
use crate::meta::now_rfc3339;
use crate::Api;

/// Apply `patch` (the decoded apply configuration) to the object the URL names.
pub(crate) async fn apply(api: &Arc<Api>, w: &Write<'_>, patch: Value) -> Result<Written> {
    let res = w.res;
    let key = w.key()?;
    let name = w.name();
    let Some(manager) = w.query.field_manager.clone() else {
        return Err(ApiError::bad_request("PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"));
    };
    if !patch.is_object() {
        return Err(ApiError::bad_request(
            "the apply configuration must be an object",
        ));
    }
    if patch["apiVersion"].as_str() != Some(res.api_version().as_str())
        || patch["kind"].as_str() != Some(res.kind.as_str())
    {
        return Err(ApiError::bad_request(format!(
            "the apply configuration must have apiVersion {:?} and kind {:?}",
            res.api_version(),
            res.kind
        )));
    }
    if let Some(n) = patch.pointer("/metadata/name").and_then(Value::as_str) {
        if n != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
    }
    identity::check_namespace(res, w.info, &patch)?;
    let root = api.schemas.root_type(res);
    let lookup = api.schemas.lookup(res);
    let applier = Applier::new(&*lookup, &root).with_scope(crate::schemas::scope(res, w.sub));
    let force = w.query.force;
    let dry_run = w.query.dry_run;
    api.cache.sync().await?;
    if api.cache.get(&key).is_none() {
        if w.sub.is_some() {
            return Err(ApiError::not_found(target(res, &name)));
        }
        // An apply that creates is a create (kube-apiserver authorizes it as one): `patch`
        // alone must not bring objects into being.
        let mut as_create = w.info.clone();
        as_create.verb = "create".into();
        api.access.authorize(&api.cache, w.user, &as_create).await?;
        let mut obj = applier
            .apply(None, &patch, &manager, force, &now_rfc3339())
            .map_err(apply_error)?;
        if res.namespaced {
            crate::meta::set_meta(&mut obj, "namespace", json!(w.info.object_namespace()));
        }
        crate::meta::set_meta(&mut obj, "name", json!(name));
        let warnings =
            admission::client_object(api, w.user, w.info, res, &mut obj, w.query.field_validation)
                .await?;
        match commit_create(api, res, obj, None, dry_run).await {
            Err(e) if e.code == 409 => {} // raced with a create: fall through to update
            other => {
                return Ok(Written {
                    outcome: other?,
                    created: true,
                    warnings,
                })
            }
        }
    }
    let outcome = client_update(api, w, &key, &name, |old| {
        let mut new = applier
            .apply(Some(old), &patch, &manager, force, &now_rfc3339())
            .map_err(apply_error)?;
        // The precondition is the client's only if its configuration named a resourceVersion.
        if patch.pointer("/metadata/resourceVersion").is_none() {
            crate::meta::set_meta(&mut new, "resourceVersion", json!(""));
        }
        admission::applied(api, res, &mut new)?;
        admission::admit_client_write(api, w.user, w.info, res, Some(old), &mut new)?;
        Ok(new)
    })
    .await?;
    Ok(Written {
        outcome,
        created: false,
        warnings: Vec::new(),
    })
}

fn apply_error(e: ApplyError) -> ApiError {
    match e {
        ApplyError::Conflicts(cs) => {
            let mut err = ApiError::new(409, "Conflict", crate::apply::conflicts_message(&cs));
            let causes: Vec<Value> = cs
                .iter()
                .map(|c| json!({"reason": "FieldManagerConflict", "message": c.cause_message(), "field": c.field}))
                .collect();
            err.details = Some(json!({"causes": causes}));
            err
        }
        ApplyError::InvalidManagedFields(m) => {
            ApiError::internal(format!("stored managedFields are invalid: {m}"))
        }
        other => ApiError::bad_request(other.to_string()),
    }
}
