//! Update and patch, and the compare-and-swap loop every change of a stored object goes
//! through (the server's own changes too: finalizers, deletion marks, conditions).

use std::sync::Arc;

use serde_json::{json, Value};

use super::subresource::merge_for_subresource;
use super::{render_at, render_stored, target, Outcome, Write, Written};
use crate::admission::schema::fields;
use crate::admission::{self, identity};
use crate::error::{ApiError, Result};
use crate::meta::{self, meta_str, remove_meta, set_meta};
use crate::registry::ResourceInfo;
use crate::request::{BodyFormat, FieldValidation};
use crate::Api;

/// PUT: replace the object (or its `status` / `finalize` part) with `obj`.
pub(crate) async fn update(api: &Arc<Api>, w: &Write<'_>, mut obj: Value) -> Result<Written> {
    let res = w.res;
    admission::check_type(res, &mut obj)?;
    let key = w.key()?;
    let name = w.name();
    identity::check(res, w.info, &obj)?;
    must_exist(api, res, &key, &name).await?;
    let warnings = admission::validate(api, res, &mut obj, w.query.field_validation)?;
    let outcome = client_update(api, w, &key, &name, |old| {
        let new = merge_for_subresource(res, w.sub, old, obj.clone());
        client_change(api, w, old, new)
    })
    .await?;
    Ok(Written {
        outcome,
        created: false,
        warnings,
    })
}

/// PATCH with a JSON, merge or strategic merge patch document (apply is [`super::apply`]).
pub(crate) async fn patch(
    api: &Arc<Api>,
    w: &Write<'_>,
    format: BodyFormat,
    patch: Value,
) -> Result<Written> {
    let res = w.res;
    let key = w.key()?;
    let name = w.name();
    must_exist(api, res, &key, &name).await?;
    let outcome = client_update(api, w, &key, &name, |old| {
        let mut patched = api.schemas.patch(res, format, old, &patch)?;
        identity::check(res, w.info, &patched)?;
        judge_patched(api, w, format, &patch, &mut patched)?;
        admission::validate_patched(api, res, &mut patched)?;
        let mut new = merge_for_subresource(res, w.sub, old, patched);
        if let Some(o) = new.as_object_mut() {
            o.insert("apiVersion".into(), old["apiVersion"].clone());
            o.insert("kind".into(), old["kind"].clone());
        }
        client_change(api, w, old, new)
    })
    .await?;
    Ok(Written {
        outcome,
        created: false,
        warnings: Vec::new(),
    })
}

/// Field validation of a patch, as kube-apiserver's: the patched object's unknown fields are
/// dropped; they and the patch's duplicates are refused (Strict, 422) or raised as warnings
/// (Warn).
fn judge_patched(
    api: &Api,
    w: &Write<'_>,
    format: BodyFormat,
    patch: &Value,
    patched: &mut Value,
) -> Result<()> {
    let level = w.query.field_validation;
    // A strict refusal shows the patched object as it was, unknown fields included.
    let unpruned = (level == FieldValidation::Strict && format != BodyFormat::StrategicMergePatch)
        .then(|| patched.to_string());
    let unknown = fields::prune_patched(&api.schemas, w.res, format, patched);
    if level == FieldValidation::Ignore {
        return Ok(());
    }
    let errors = fields::patched_errors(&w.body_errors, unknown);
    let shown = || match format {
        BodyFormat::StrategicMergePatch => fields::go_print(patch),
        _ => unpruned.unwrap_or_default(),
    };
    for warning in fields::judge_patch(level, errors, shown)? {
        admission::scope::warn(warning);
    }
    Ok(())
}

/// [`guaranteed_update`] of the object at `key` for a client's request `w`.
pub(super) async fn client_update<F>(
    api: &Arc<Api>,
    w: &Write<'_>,
    key: &str,
    name: &str,
    change: F,
) -> Result<Outcome>
where
    F: FnMut(&Value) -> Result<Value>,
{
    guaranteed_update(
        api,
        Writer::Client,
        w.res,
        key,
        name,
        w.query.dry_run,
        change,
    )
    .await
}

/// Read-your-writes: an object created just before must be found.
async fn must_exist(api: &Api, res: &ResourceInfo, key: &str, name: &str) -> Result<()> {
    api.cache.sync().await?;
    if api.cache.get(key).is_none() {
        return Err(ApiError::not_found(target(res, name)));
    }
    Ok(())
}

/// The last steps of a client's PUT or PATCH on the object it would store: the update's
/// defaults (the updater's, as in kube-apiserver's field manager), its managedFields entry, and
/// the RBAC escalation check.
fn client_change(api: &Api, w: &Write<'_>, old: &Value, mut new: Value) -> Result<Value> {
    let res = w.res;
    admission::defaults::on_update(res, old, &mut new);
    api.schemas
        .track_update(res, Some(old), &mut new, &w.manager, w.sub);
    admission::admit_client_write(api, w.user, w.info, res, Some(old), &mut new)?;
    Ok(new)
}

/// Who writes through [`guaranteed_update`], which decides the metadata a change may set.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Writer {
    /// A client's request: `deletionTimestamp` and `deletionGracePeriodSeconds` stay as stored
    /// (a client deletes with DELETE, not by writing the mark).
    Client,
    /// The server itself (deletion, finalizers, conditions): it may set `deletionTimestamp`.
    Server,
}

/// Read-modify-write with compare-and-swap, retried on conflicts the client didn't ask for.
/// `change` gets the current object and returns the desired one; a resourceVersion inside the
/// desired object that differs from the current one is the client's precondition → 409.
pub(crate) async fn guaranteed_update<F>(
    api: &Arc<Api>,
    writer: Writer,
    res: &ResourceInfo,
    key: &str,
    name: &str,
    dry_run: bool,
    mut change: F,
) -> Result<Outcome>
where
    F: FnMut(&Value) -> Result<Value>,
{
    api.cache.sync().await?;
    for _ in 0..32 {
        let cur = api
            .cache
            .get(key)
            .ok_or_else(|| ApiError::not_found(target(res, name)))?;
        // `change` works on the object as `res` serves it; it is stored in storage's shape.
        // As kube-apiserver defaults what it reads from etcd: a default is never a change. A
        // custom resource, or a built-in kind with no conversion and no defaults (a ConfigMap,
        // a Lease renewed by every member's heartbeat), is served as stored: not copied.
        let as_stored = res.custom
            || !(crate::registry::storage::converts(res) || admission::defaults::any(res));
        let (mut old, stored) = if as_stored {
            (cur.value(), None)
        } else {
            let stored = cur.value();
            (
                crate::registry::storage::from_storage(res, stored.clone()),
                Some(stored),
            )
        };
        admission::read_back(res, &mut old);
        let mut new = change(&old)?;
        admission::mutate_change(res, &old, &mut new);
        let cur_rv = cur.mod_revision.to_string();
        // A resourceVersion the change sets (a PUT's body, a patch naming one) is the client's
        // precondition. One the change merely kept from `old` (a patch without it) matches by
        // construction, and on a lost race below the change is applied again to the newer
        // object, as kube-apiserver's GuaranteedUpdate does.
        if let Some(rv) = meta_str(&new, "resourceVersion").filter(|rv| !rv.is_empty()) {
            if rv != cur_rv {
                return Err(ApiError::conflict(
                    target(res, name),
                    "the object has been modified; please apply your changes to the latest version and try again",
                ));
            }
        }
        // Fields only the server sets.
        let owned: &[&str] = if writer == Writer::Server {
            &["uid", "creationTimestamp", "name", "namespace"]
        } else {
            &[
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "name",
                "namespace",
            ]
        };
        for f in owned.iter().copied() {
            match old.pointer(&format!("/metadata/{f}")) {
                Some(v) => set_meta(&mut new, f, v.clone()),
                None => {
                    remove_meta(&mut new, f);
                }
            }
        }
        set_meta(&mut new, "resourceVersion", json!(cur_rv));
        match meta::generation::after_update(res, &old, &new) {
            Some(gen) => set_meta(&mut new, "generation", json!(gen)),
            None => {
                remove_meta(&mut new, "generation");
            }
        }
        admission::changed_object(res, &old, &new)?;
        let new = crate::registry::storage::to_storage(res, new);
        if new == *stored.as_ref().unwrap_or(&old) && !api.cache.is_stale(key) {
            return Ok(Outcome::Unchanged(cur));
        }
        // Whatever produced it (a patch, an apply, a controller), refused if unreadable.
        admission::storable(&new)?;
        let terminating = old.pointer("/metadata/deletionTimestamp").is_some();
        if dry_run {
            return Ok(Outcome::DryRun(new));
        }
        let result = if terminating
            && meta::finalizers(&new).is_empty()
            && !super::has_spec_finalizers(res, &new)
        {
            api.store
                .delete(key, cur.mod_revision, render_at(api, key, new))
                .await
                .map(Outcome::Deleted)
        } else {
            api.store
                .update(key, cur.mod_revision, render_stored(api, res, key, new))
                .await
                .map(Outcome::Written)
        };
        match result {
            Ok(Outcome::Written(r)) => return Ok(Outcome::Written(super::opened(api, r)?)),
            Ok(Outcome::Deleted(r)) => return Ok(Outcome::Deleted(super::opened(api, r)?)),
            Ok(o) => return Ok(o),
            Err(flotilla_store::Error::Conflict { .. }) => {
                api.cache.sync().await?;
                continue;
            }
            Err(flotilla_store::Error::NotFound { .. }) => {
                return Err(ApiError::not_found(target(res, name)))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::conflict(
        target(res, name),
        "too many concurrent writers; try again",
    ))
}
