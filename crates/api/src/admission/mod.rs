//! Admission: every check and rewrite an object meets on its way to storage, in one ordered
//! list. The write engine ([`crate::objects`]) calls the steps below and nothing else of
//! validation or defaulting, so this list is the whole story of what a write must pass.
//!
//! | # | step | where | create | update (PUT) | patch | apply | server's own writes |
//! |---|------|-------|--------|--------------|-------|-------|--------------------|
//! | 1 | kind: body's apiVersion/kind are the resource's (400) | [`metadata::check_type`] | ✓ | ✓ | | (engine's own check) | |
//! | 2 | address: body's namespace/name are the URL's (400) | [`metadata::place_in_namespace`], [`identity`] | ✓ | ✓ | ✓ | ✓ | |
//! | 3 | join rewrite of a bootstrap user's Cluster (403/422) | [`join`] | ✓ | | | on create | |
//! | 4 | metadata: label values, a CRD's name (422) | [`metadata::check_metadata`] | ✓ | ✓ | ✓ | on create | |
//! | 5 | schema: unknown fields (warn / 400), CRD values, defaults and CEL rules (422); an update's on the merged object, ratcheted, with transition rules (in [`admit_client_write`]) | [`schema`] | ✓ | ✓ | ✓ | ✓ (defaults on update: [`applied`]) | |
//! | 6 | RBAC escalation (403) | [`crate::access::Access::admit_rbac_write`] | ✓ | ✓ | ✓ | ✓ | |
//! | 6a | mutating webhooks, ValidatingAdmissionPolicy (CEL; 422/403/Warning), validating webhooks, on the client's object (in [`admit_client_write`]) | [`policy`], [`webhook`] | ✓ | ✓ | ✓ | ✓ | |
//! | 6b | LimitRanger: a new pod's container defaults, min/max/ratio of pods and claims (403) | [`limitrange`] | ✓ | ✓ (claims) | ✓ (claims) | ✓ | |
//! | 6c | ResourceQuota: usage past a quota's hard limit (403), last as in kube | [`quota`] | ✓ | ✓ (services, claims) | ✓ (services, claims) | ✓ | |
//! | 7 | name required, namespace exists and is not terminating (422/404/403) | [`metadata::check_name_given`], [`namespace`] | ✓ | | | on create | ✓ (create) |
//! | 8 | defaulting | [`defaults`] | ✓ | ✓ | ✓ | ✓ | ✓ |
//! | 9 | per-kind validation; on update only what the update changes (422) | [`validation`] | ✓ | ✓ | ✓ | ✓ | ✓ |
//! | 10 | limits: depth and size of the object to store (422/413) | [`crate::limits`] | ✓ | ✓ | ✓ | ✓ | ✓ |
//! | 11 | name rule of the kind, generated names included (422) | [`metadata::check_name`] | ✓ | | | on create | ✓ (create) |
//!
//! Steps 1–6 judge what the client sent ([`client_object`] runs 3–6 for a new object; an update
//! runs 4–5 ([`validate`]) and 6 ([`admit_client_write`]) on the object it works out from the stored
//! one); steps 7–11 judge the object about to be stored, with its system fields set, and run
//! for the server's own writes too ([`new_object`], [`changed_object`], [`storable`]). The order
//! is what clients observe (which error a request with several faults gets), as in
//! kube-apiserver: mutating admission, then validation, then storage's own checks.

pub mod defaults;
pub(crate) mod identity;
pub(crate) mod join;
pub(crate) mod kinds;
pub(crate) mod limitrange;
pub(crate) mod metadata;
pub(crate) mod namespace;
pub mod policy;
pub(crate) mod quota;
pub mod schema;
pub(crate) mod scope;
pub mod validation;
pub(crate) mod webhook;

use serde_json::Value;

use crate::auth::UserInfo;
use crate::error::Result;
use crate::registry::ResourceInfo;
use crate::request::{FieldValidation, RequestInfo};
use crate::Api;

pub(crate) use metadata::{check_name, check_name_given, check_type, place_in_namespace};
pub(crate) use namespace::check_namespace;

/// Steps 3–6 for a new object a client sends (create, or an apply that creates): its shapes,
/// the join rewrite, metadata, schema, escalation. Returns the schema's warnings.
pub(crate) async fn client_object(
    api: &Api,
    user: &UserInfo,
    info: &RequestInfo,
    res: &ResourceInfo,
    obj: &mut Value,
    level: FieldValidation,
) -> Result<Vec<String>> {
    schema::decodable(&api.schemas, res, obj)?;
    join::admit_create(&api.cache, user, res, obj).await?;
    metadata::check_metadata(res, obj)?;
    let warnings = schema::validate(&api.schemas, res, obj, level, schema::Values::Refuse)?;
    if res.group == "rbac.authorization.k8s.io" && !res.custom {
        // The role a new binding names may have been created a moment ago: judge it from a
        // cache that has every acknowledged write (kube-apiserver reads it from storage).
        api.cache.sync().await?;
    }
    // LimitRanger's defaults are a mutating step: every later one sees the defaulted pod.
    limitrange::admit_new(api, info, res, obj)?;
    admit_client_write(api, user, info, res, None, obj)?;
    Ok(warnings)
}

/// Steps 4–5 for an update's or patch's body: metadata and schema. Unknown fields are
/// dropped, and reported as warnings (fieldValidation=Warn) or refused (Strict); a custom
/// resource gets its schema's defaults, and its values are judged on the merged object (in
/// [`admit_client_write`], with ratcheting).
pub(crate) fn validate(
    api: &Api,
    res: &ResourceInfo,
    obj: &mut Value,
    level: FieldValidation,
) -> Result<Vec<String>> {
    schema::decodable(&api.schemas, res, obj)?;
    metadata::check_metadata(res, obj)?;
    schema::validate(&api.schemas, res, obj, level, schema::Values::DefaultOnly)
}

/// Steps 4–5 for a patched object whose unknown fields were dropped already (by
/// [`schema::fields::prune_patched`], which the patch's field validation reports from):
/// metadata, shapes, a custom resource's defaults (its values are judged in
/// [`admit_client_write`], as every update's).
pub(crate) fn validate_patched(api: &Api, res: &ResourceInfo, obj: &mut Value) -> Result<()> {
    schema::decodable(&api.schemas, res, obj)?;
    metadata::check_metadata(res, obj)?;
    schema::defaults(&api.schemas, res, obj);
    Ok(())
}

/// Step 5 for an apply that updates: the merged object's defaults (its values are judged in
/// [`admit_client_write`], as every update's).
pub(crate) fn applied(api: &Api, res: &ResourceInfo, obj: &mut Value) -> Result<()> {
    schema::defaults(&api.schemas, res, obj);
    Ok(())
}

/// The end of step 5 and step 6, for every client write with its old and new object: for an
/// update (`old` given) the part of step 5 that needs the stored object (a custom resource's
/// values and rules on the merged object, ratcheted, and its transition rules `oldSelf`, 422);
/// then step 6, a write of an RBAC object grants nothing its writer does not hold (403).
pub(crate) fn admit_client_write(
    api: &Api,
    user: &UserInfo,
    info: &RequestInfo,
    res: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
) -> Result<()> {
    if let Some(old) = old {
        schema::update(&api.schemas, res, old, new)?;
    }
    api.access
        .admit_rbac_write(&api.cache, user, info, res, old, new)?;
    api.access
        .admit_clusterset_binding(&api.cache, user, info, res, old, new)?;
    kinds::admit(api, user, info, res, old, new)?;
    if let Some(old) = old {
        limitrange::admit_update(api, info, res, old, new)?;
    }
    policy::admit(api, user, info, res, old, new)?;
    quota::admit(api, info, res, old, new)
}

/// Steps 8–9 for a new object with its system fields set: creation defaults, then validation.
pub(crate) fn new_object(res: &ResourceInfo, obj: &mut Value) -> Result<()> {
    defaults::on_create(res, obj);
    validation::check(res, obj)
}

/// Step 8 for a stored object read back for an update: as kube-apiserver defaults what it reads
/// from etcd, a default is never a change.
pub(crate) fn read_back(res: &ResourceInfo, old: &mut Value) {
    defaults::apply(res, old);
}

/// Step 8 (and the join rewrite's part in updates) for an update's new object: the update's
/// defaults, and the hub-owned request annotation of a Cluster kept as stored.
pub(crate) fn mutate_change(res: &ResourceInfo, old: &Value, new: &mut Value) {
    defaults::on_update(res, old, new);
    join::keep_requested_by(res, old, new);
}

/// Step 9 for an update, once its system fields are set: only what the update changes.
pub(crate) fn changed_object(res: &ResourceInfo, old: &Value, new: &Value) -> Result<()> {
    validation::check_update(res, old, new)
}

/// Step 10: whatever produced it (a create, a patch, an apply, a controller), an object is
/// refused when it could not be read back.
pub(crate) fn storable(obj: &Value) -> Result<()> {
    crate::limits::check_storable(obj)
}
