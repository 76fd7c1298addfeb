//! Join requests in admission: what a bootstrap token's `Cluster` may ask for, and what the hub
//! writes on its behalf (who may make one is [`crate::access::join`]).
//!
//! Admission on Cluster writes, because a create permission alone would let a token
//! claim any cluster identity and configuration:
//! - a bootstrap user's create must use the name its token is pinned to (if any), may be the
//!   token's only join request, and is rewritten to what a join request may ask for: pull mode,
//!   no push credential (`secretRef`), no taints, no status;
//! - [`REQUESTED_BY_ANNOTATION`] is the hub's alone: set on a bootstrap user's create, removed
//!   from anyone else's, and restored to its stored value on every update or patch, silently,
//!   as kube-apiserver treats the fields it owns (a 422 would break clients that round-trip
//!   the object they read).
//!
//! Known limit: two concurrent creates with one token, under different names, can both pass
//! the single-use check (it reads the watch cache, and nothing serializes the two writes); the
//! admin then sees two pending requests from one token and approves at most one.

use flotilla_apis::cluster::v1alpha1::GROUP;
use flotilla_apis::names::{cluster_name_error, REQUESTED_BY_ANNOTATION};
use serde_json::{json, Map, Value};

use crate::access::join::{requested_by, token_secret, CLUSTERS};
use crate::auth::bootstrap_token;
use crate::auth::UserInfo;
use crate::cache::Cache;
use crate::error::{ApiError, Result};
use crate::meta::{meta_mut, meta_str};
use crate::registry::ResourceInfo;

/// Admission for a create of `obj` at `res` by `user`: refuse what a join request may not ask
/// for, and set what only the hub sets. Does nothing for other kinds.
pub(crate) async fn admit_create(
    cache: &Cache,
    user: &UserInfo,
    res: &ResourceInfo,
    obj: &mut Value,
) -> Result<()> {
    if !is_cluster(res) {
        return Ok(());
    }
    check_cluster_name(res, obj)?;
    let Some(id) = bootstrap_token::token_id(&user.name) else {
        set_requested_by(obj, None);
        return Ok(());
    };
    let name = meta_str(obj, "name").unwrap_or_default().to_string();
    let secret = token_secret(cache, id)
        .await?
        .ok_or_else(|| forbidden(res, &name, "this bootstrap token no longer exists"))?;
    match bootstrap_token::pinned_cluster(&secret.value()) {
        Ok(Some(pinned)) if pinned != name => {
            let why = format!("this bootstrap token may only ask to join as cluster {pinned:?}");
            return Err(forbidden(res, &name, &why));
        }
        Ok(_) => {}
        Err(e) => {
            tracing::debug!(token_id = %id, reason = %e, "bootstrap token Secret is unusable");
            let why = "this bootstrap token's Secret is malformed; create a new one with \
                       flotilla token create";
            return Err(forbidden(res, &name, why));
        }
    }
    cache.sync().await?;
    let prefix = format!("/registry/{GROUP}/{CLUSTERS}/");
    let (earlier, _, _) = cache.list(&prefix, None, Some(1), |c| {
        c.name != name && requested_by(&c.value()) == Some(user.name.as_str())
    });
    if let Some(earlier) = earlier.first() {
        let why = format!(
            "this bootstrap token was already used to ask to join as cluster {:?}; create a new \
             one with flotilla token create",
            earlier.name
        );
        return Err(forbidden(res, &name, &why));
    }
    set_requested_by(obj, Some(&user.name));
    as_join_request(obj);
    Ok(())
}

/// Admission for an update (also patch, apply, status, finalizer removal): the annotation only
/// the hub sets keeps its stored value in `new`, whatever the client sent.
pub(crate) fn keep_requested_by(res: &ResourceInfo, old: &Value, new: &mut Value) {
    if is_cluster(res) {
        set_requested_by(new, requested_by(old));
    }
}

/// A Cluster's name must make a valid execution namespace name (`flotilla-es-<name>`), or the
/// cluster could ask to join but never be approved: 422 Invalid on `metadata.name`, whoever
/// creates it. A `generateName` is checked as the name it would generate (five more characters).
fn check_cluster_name(res: &ResourceInfo, obj: &Value) -> Result<()> {
    let (field, name, checked) = match meta_str(obj, "name").filter(|n| !n.is_empty()) {
        Some(name) => ("metadata.name", name.to_string(), name.to_string()),
        None => match meta_str(obj, "generateName").filter(|n| !n.is_empty()) {
            Some(prefix) => (
                "metadata.generateName",
                prefix.to_string(),
                format!("{prefix}x0000"),
            ),
            // Neither: the write path's "name or generateName is required" answers.
            None => return Ok(()),
        },
    };
    match cluster_name_error(&checked) {
        None => Ok(()),
        Some(why) => Err(ApiError::invalid(
            &res.kind,
            &name,
            &res.group,
            vec![(field.to_string(), format!("Invalid value: {name:?}: {why}"))],
        )),
    }
}

/// Is `res` flotilla's `Cluster`?
fn is_cluster(res: &ResourceInfo) -> bool {
    res.group == GROUP && res.plural == CLUSTERS
}

/// Set [`REQUESTED_BY_ANNOTATION`] to `value`, or remove it (and an annotation map it leaves
/// empty).
fn set_requested_by(obj: &mut Value, value: Option<&str>) {
    let Some(meta) = meta_mut(obj) else {
        return;
    };
    match value {
        Some(v) => {
            let annotations = meta
                .entry("annotations")
                .or_insert_with(|| Value::Object(Map::new()));
            if !annotations.is_object() {
                *annotations = Value::Object(Map::new());
            }
            annotations[REQUESTED_BY_ANNOTATION] = json!(v);
        }
        None => {
            let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut)
            else {
                return;
            };
            if annotations.remove(REQUESTED_BY_ANNOTATION).is_some() && annotations.is_empty() {
                meta.remove("annotations");
            }
        }
    }
}

/// What a join request may ask for: a pull-mode cluster with its labels and whereabouts (region,
/// zone, provider, apiEndpoint), but no push credential, no taints, and no status of its own.
fn as_join_request(obj: &mut Value) {
    let Some(o) = obj.as_object_mut() else {
        return;
    };
    o.remove("status");
    let spec = o.entry("spec").or_insert_with(|| json!({}));
    if spec.is_null() {
        *spec = json!({});
    }
    // A spec that is not an object is left to schema validation to refuse.
    if let Some(spec) = spec.as_object_mut() {
        spec.insert("syncMode".into(), json!("Pull"));
        spec.remove("secretRef");
        spec.remove("taints");
    }
}

/// kube-apiserver's admission refusal: `clusters.cluster.flotilla.io "m2" is forbidden: …`.
fn forbidden(res: &ResourceInfo, name: &str, why: &str) -> ApiError {
    let subject = if name.is_empty() {
        res.group_resource()
    } else {
        format!("{} {name:?}", res.group_resource())
    };
    ApiError {
        details: Some(json!({"name": name, "group": res.group, "kind": res.plural})),
        ..ApiError::forbidden(format!("{subject} is forbidden: {why}"))
    }
}
