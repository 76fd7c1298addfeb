//! The schema-driven operations handlers need — validation, patching, server-side apply,
//! managedFields, OpenAPI documents — behind one handle, so handlers don't care whether a kind
//! is built in or comes from a CRD.

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use axum::body::Body;
use http::Response;
use serde_json::{json, Value};

use crate::apply::{Applier, ApplyError, Scope};
use crate::meta::now_rfc3339;
use crate::schema::lookup::SchemaLookup;
use crate::schema::SchemaSet;

use crate::error::{ApiError, Result};
use crate::handlers::{response, Ctx};
use crate::registry::{ResourceInfo, Snapshot};
use crate::request::{BodyFormat, FieldValidation};
use crate::Api;

/// Schemas of every served kind.
pub struct Schemas {
    set: SchemaSet,
    /// Names of the CRDs the set holds now.
    crds: Mutex<BTreeSet<String>>,
    /// The v2 document as protobuf, with the hash of the JSON it was made from.
    v2_protobuf: Mutex<Option<(Arc<str>, Bytes)>>,
}

impl Default for Schemas {
    fn default() -> Self {
        Self::new()
    }
}

impl Schemas {
    /// Schemas of the built-in kinds.
    pub fn new() -> Schemas {
        Schemas {
            set: SchemaSet::default(),
            crds: Mutex::default(),
            v2_protobuf: Mutex::default(),
        }
    }

    /// Validate against the kind's schema: unknown fields are dropped, and reported as
    /// warnings (`Warn`, the default) or refused (`Strict`) as in Kubernetes.
    pub fn validate(
        &self,
        res: &ResourceInfo,
        obj: &mut Value,
        level: FieldValidation,
    ) -> Result<Vec<String>> {
        let root = self.root_type(res);
        if root.is_empty() {
            return Ok(Vec::new());
        }
        let unknown = crate::schema::validate::prune_unknown(&self.set, &root, obj);
        if res.custom {
            self.check_values(res, &root, obj)?;
        }
        let messages: Vec<String> = unknown
            .iter()
            .map(|f| format!("unknown field \"{f}\""))
            .collect();
        match level {
            FieldValidation::Strict if !messages.is_empty() => Err(ApiError::bad_request(format!(
                "strict decoding error: {}",
                messages.join(", ")
            ))),
            FieldValidation::Warn => Ok(messages),
            _ => Ok(Vec::new()),
        }
    }

    /// Custom resources: fill in the schema's defaults and refuse values that break it (422).
    fn check_values(&self, res: &ResourceInfo, root: &str, obj: &mut Value) -> Result<()> {
        let snapshot = self.set.snapshot();
        let Some(schema) = snapshot.definition(root) else {
            return Ok(());
        };
        let causes = crate::schema::values::default_and_check(schema, obj);
        if causes.is_empty() {
            return Ok(());
        }
        // kube-apiserver names the kind with its group in the message (`Cluster.cluster.flotilla.io
        // "x" is invalid`), and without it in the details.
        let mut e = ApiError::invalid_object(res, obj, causes);
        e.message = format!("{}.{}{}", res.kind, res.group, &e.message[res.kind.len()..]);
        Err(e)
    }

    /// Record field ownership of a non-apply write.
    pub fn track_update(
        &self,
        res: &ResourceInfo,
        old: Option<&Value>,
        new: &mut Value,
        manager: &str,
        sub: Option<&str>,
    ) {
        let root = self.root_type(res);
        let lookup = self.lookup(res);
        let applier = Applier::new(lookup, &root).with_scope(scope(res, sub));
        if let Err(e) = applier.track_update(old, new, manager, &now_rfc3339()) {
            tracing::debug!(manager, error = %e, "managedFields not tracked for this write");
        }
    }

    /// The schema lookup for a kind.
    pub fn lookup(&self, res: &ResourceInfo) -> &dyn SchemaLookup {
        let _ = res;
        &self.set
    }

    /// Apply a patch document.
    pub fn patch(
        &self,
        res: &ResourceInfo,
        format: BodyFormat,
        old: &Value,
        patch: &Value,
    ) -> Result<Value> {
        let r = match format {
            BodyFormat::MergePatch => crate::patch::merge_patch(old, patch),
            BodyFormat::JsonPatch => crate::patch::json_patch(old, patch),
            BodyFormat::StrategicMergePatch => {
                let root = self.root_type(res);
                crate::patch::strategic_merge_patch(old, patch, &self.set, &root)
            }
            _ => return Err(ApiError::unsupported_media_type("unsupported patch type")),
        };
        r.map_err(|e| match e {
            crate::patch::PatchError::Malformed(m) => ApiError::bad_request(m),
            crate::patch::PatchError::Unprocessable(m) => ApiError::new(422, "Invalid", m),
            crate::patch::PatchError::TooLarge(m) => ApiError::too_large(m),
        })
    }

    /// The schema definition name for a kind.
    pub fn root_type(&self, res: &ResourceInfo) -> String {
        self.set
            .root_type(&res.group, &res.version, &res.kind)
            .unwrap_or_default()
    }

    /// `/openapi/v2` (JSON, or gnostic protobuf when the client asks for it).
    pub fn openapi_v2(&self, snap: &Snapshot, accept: Option<&str>) -> Result<Response<Body>> {
        let _ = snap;
        let doc = self.set.openapi_v2();
        let wants_pb = accept.is_some_and(|a| {
            crate::protobuf::OPENAPI_V2_PROTOBUF_MEDIA_TYPES
                .iter()
                .any(|t| a.contains(t))
        });
        if !wants_pb {
            return Ok(response::raw(200, doc.bytes.clone()));
        }
        let mut cached = self.v2_protobuf.lock();
        let pb = match &*cached {
            Some((hash, pb)) if *hash == doc.hash => pb.clone(),
            _ => {
                let json: Value = serde_json::from_slice(&doc.bytes)
                    .map_err(|e| ApiError::internal(format!("OpenAPI v2 document: {e}")))?;
                let pb =
                    Bytes::from(crate::protobuf::openapi_v2_to_protobuf(&json).map_err(|e| {
                        ApiError::internal(format!("encoding OpenAPI v2 as protobuf: {e}"))
                    })?);
                *cached = Some((doc.hash.clone(), pb.clone()));
                pb
            }
        };
        Ok(response::raw_typed(
            200,
            pb,
            crate::protobuf::OPENAPI_V2_PROTOBUF_CONTENT_TYPE,
        ))
    }

    /// `/openapi/v3`.
    pub fn openapi_v3_index(&self, snap: &Snapshot) -> Result<Response<Body>> {
        let _ = snap;
        Ok(response::raw(200, self.set.openapi_v3_index().bytes))
    }

    /// `/openapi/v3/<gv>`.
    pub fn openapi_v3(&self, snap: &Snapshot, path: &str) -> Result<Response<Body>> {
        let _ = snap;
        let doc = self
            .set
            .openapi_v3(path.trim_matches('/'))
            .ok_or_else(|| ApiError::unknown_path(&format!("/openapi/v3/{path}")))?;
        Ok(response::raw(200, doc.bytes))
    }

    /// Replace the set of CRD schemas.
    pub fn set_crds(&self, crds: &[Value]) {
        let mut known = self.crds.lock();
        let mut now = BTreeSet::new();
        for crd in crds {
            let name = crd
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            match self.set.apply_crd(crd) {
                Ok(_) => {
                    now.insert(name);
                }
                Err(e) => {
                    tracing::warn!(crd = %name, error = %e, "CRD schema not usable; its kind is served without a schema")
                }
            }
        }
        for gone in known.difference(&now) {
            self.set.remove_crd(gone);
        }
        *known = now;
    }
}

fn scope(res: &ResourceInfo, sub: Option<&str>) -> Scope {
    match sub {
        None if !res.status => Scope::whole(),
        other => Scope::for_subresource(other),
    }
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

/// Server-side apply of `patch` to the object at `key`: create it when absent, otherwise merge
/// the configuration by field ownership (409 with the conflicting fields unless `force`).
pub async fn serve_apply(
    api: &Arc<Api>,
    ctx: &Ctx,
    res: &ResourceInfo,
    sub: Option<&str>,
    key: &str,
    name: &str,
    patch: Value,
) -> Result<Response<Body>> {
    let Some(manager) = ctx.query.field_manager.clone() else {
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
    crate::handlers::objects::identity::check_namespace(res, &ctx.info, &patch)?;
    let root = api.schemas.root_type(res);
    let lookup = api.schemas.lookup(res);
    let applier = Applier::new(lookup, &root).with_scope(scope(res, sub));
    let force = ctx.query.force;
    api.cache.sync().await?;
    if api.cache.get(key).is_none() {
        if sub.is_some() {
            return Err(ApiError::not_found(crate::error::Target {
                group: &res.group,
                resource: &res.plural,
                name,
            }));
        }
        // An apply that creates is a create (kube-apiserver authorizes it as one): `patch`
        // alone must not bring objects into being.
        let mut as_create = ctx.info.clone();
        as_create.verb = "create".into();
        api.access
            .authorize(&api.cache, &ctx.user, &as_create)
            .await?;
        let mut obj = applier
            .apply(None, &patch, &manager, force, &now_rfc3339())
            .map_err(apply_error)?;
        if res.namespaced {
            crate::meta::set_meta(&mut obj, "namespace", json!(ctx.info.object_namespace()));
        }
        crate::meta::set_meta(&mut obj, "name", json!(name));
        crate::access::join::admit_create(&api.cache, &ctx.user, res, &mut obj).await?;
        let warnings = api.validate(res, &mut obj, ctx.query.field_validation)?;
        api.access
            .admit_rbac_write(&api.cache, &ctx.user, &ctx.info, res, None, &obj)?;
        let outcome =
            match crate::handlers::objects::commit_create(api, res, obj, None, ctx.query.dry_run)
                .await
            {
                Err(e) if e.code == 409 => None, // raced with a create: fall through to update
                other => Some(other?),
            };
        if let Some(o) = outcome {
            let mut r = crate::handlers::objects::outcome_response(res, o);
            *r.status_mut() = http::StatusCode::CREATED;
            return Ok(crate::handlers::response::with_warnings(r, &warnings));
        }
    }
    let outcome = crate::handlers::objects::guaranteed_update(
        api,
        res,
        key,
        name,
        ctx.query.dry_run,
        |old| {
            let mut new = applier
                .apply(Some(old), &patch, &manager, force, &now_rfc3339())
                .map_err(apply_error)?;
            // The precondition is the client's only if its configuration named a resourceVersion.
            if patch.pointer("/metadata/resourceVersion").is_none() {
                crate::meta::set_meta(&mut new, "resourceVersion", json!(""));
            }
            api.access
                .admit_rbac_write(&api.cache, &ctx.user, &ctx.info, res, Some(old), &new)?;
            Ok(new)
        },
    )
    .await?;
    Ok(crate::handlers::objects::outcome_response(res, outcome))
}
