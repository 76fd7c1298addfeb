//! Create: admission of a new object ([`crate::admission`]), its system fields, and the write
//! that may pick a generated name.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{render_stored, target, Outcome, Write, Written};
use crate::admission;
use crate::error::{ApiError, Result};
use crate::meta::{self, meta_str, now_rfc3339, remove_meta, set_meta};
use crate::registry::ResourceInfo;
use crate::Api;

/// POST: create `obj` (the decoded body) in the namespace of the URL.
pub(crate) async fn create(api: &Arc<Api>, w: &Write<'_>, mut obj: Value) -> Result<Written> {
    let res = w.res;
    admission::check_type(res, &mut obj)?;
    admission::place_in_namespace(res, w.info.object_namespace(), &mut obj)?;
    let warnings =
        admission::client_object(api, w.user, w.info, res, &mut obj, w.query.field_validation)
            .await?;
    let outcome = commit_create(api, res, obj, Some(w.manager.as_str()), w.query.dry_run).await?;
    Ok(Written {
        outcome,
        created: true,
        warnings,
    })
}

/// Set the system fields of a new object, check it, and write it.
pub(crate) async fn commit_create(
    api: &Arc<Api>,
    res: &ResourceInfo,
    mut obj: Value,
    manager: Option<&str>,
    dry_run: bool,
) -> Result<Outcome> {
    let ns = meta_str(&obj, "namespace").map(String::from);
    let generate = meta_str(&obj, "generateName").map(String::from);
    let given = meta_str(&obj, "name")
        .map(String::from)
        .filter(|n| !n.is_empty());
    admission::check_name_given(res, given.as_deref(), generate.as_deref())?;
    admission::check_namespace(api, res, ns.as_deref(), given.as_deref().unwrap_or("")).await?;
    for key in [
        "resourceVersion",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "selfLink",
    ] {
        remove_meta(&mut obj, key);
    }
    set_meta(&mut obj, "uid", json!(uuid::Uuid::new_v4().to_string()));
    set_meta(&mut obj, "creationTimestamp", json!(now_rfc3339()));
    if meta::generation::tracked(res) {
        set_meta(&mut obj, "generation", json!(1));
    }
    // Every create strategy resets status but the node's: a kubelet registers its node with it.
    let keeps_status = !res.custom && res.group.is_empty() && res.plural == "nodes";
    if res.status && !keeps_status {
        if let Some(o) = obj.as_object_mut() {
            o.remove("status");
        }
    }
    admission::new_object(res, &mut obj)?;
    // Every outcome holds the object as stored; responses convert it back.
    let mut obj = crate::registry::storage::to_storage(res, obj);
    // Server-side apply arrives with its managedFields already computed (manager None).
    if let Some(manager) = manager {
        api.schemas.track_update(res, None, &mut obj, manager, None);
    }
    admission::storable(&obj)?;
    for attempt in 0..8 {
        let name = match (&given, &generate) {
            (Some(n), _) => n.clone(),
            (None, Some(g)) => format!("{g}{}", generate_suffix()),
            // check_name_given refused this above; should the two ever disagree, the client
            // gets an error answer, not a dropped connection.
            (None, None) => {
                return Err(ApiError::internal(
                    "an object to create has neither a name nor a generateName",
                ))
            }
        };
        admission::check_name(res, &name)?;
        set_meta(&mut obj, "name", json!(name));
        if generate.is_some() {
            // Defaults that follow the name (a namespace's name label) see the generated one.
            admission::defaults::apply(res, &mut obj);
        }
        let key = res.key(ns.as_deref(), &name);
        if dry_run {
            // A dry run answers what the real create would: a taken name is a conflict.
            api.cache.sync().await?;
            match api.cache.get(&key) {
                None => return Ok(Outcome::DryRun(obj)),
                Some(_) if given.is_none() && attempt < 7 => continue,
                Some(_) => return Err(ApiError::already_exists(target(res, &name))),
            }
        }
        match api
            .store
            .create(&key, render_stored(api, res, &key, obj.clone()))
            .await
        {
            Ok(r) => return Ok(Outcome::Written(super::opened(api, r)?)),
            Err(flotilla_store::Error::AlreadyExists { .. }) if given.is_none() && attempt < 7 => {
                continue
            }
            Err(flotilla_store::Error::AlreadyExists { .. }) => {
                return Err(ApiError::already_exists(target(res, &name)))
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::already_exists(target(
        res,
        generate.as_deref().unwrap_or(""),
    )))
}

const GENERATE_CHARS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

fn generate_suffix() -> String {
    use rand::Rng;
    let mut rng = rand::thread_rng();
    (0..5)
        .map(|_| GENERATE_CHARS[rng.gen_range(0..GENERATE_CHARS.len())] as char)
        .collect()
}
