//! The schema-driven operations the server needs — patching, server-side apply's field
//! ownership, managedFields, OpenAPI documents, and the schema set that admission validates
//! against ([`crate::admission::schema`]) — behind one handle, so callers don't care whether a
//! kind is built in or comes from a CRD.

use std::collections::BTreeSet;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;

use serde_json::Value;

use crate::apply::{Applier, Scope};
use crate::meta::now_rfc3339;
use crate::schema::{SchemaSet, Snapshot};

use crate::error::{ApiError, Result};
use crate::registry::ResourceInfo;
use crate::request::BodyFormat;

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

    /// The schema set (built-in kinds and live CRDs).
    pub fn set(&self) -> &SchemaSet {
        &self.set
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
        let applier = Applier::new(&*lookup, &root).with_scope(scope(res, sub));
        if let Err(e) = applier.track_update(old, new, manager, &now_rfc3339()) {
            tracing::debug!(manager, error = %e, "managedFields not tracked for this write");
        }
    }

    /// The schema lookup for a kind: the set's current snapshot, which a walk over an object
    /// holds for all its field lookups (the set would take its lock for each).
    pub fn lookup(&self, res: &ResourceInfo) -> Arc<Snapshot> {
        let _ = res;
        self.set.snapshot()
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
                crate::patch::strategic_merge_patch(old, patch, &*self.lookup(res), &root)
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

    /// The `/openapi/v2` document as JSON.
    pub fn openapi_v2_json(&self) -> Bytes {
        self.set.openapi_v2().bytes.clone()
    }

    /// The `/openapi/v2` document as gnostic protobuf, converted once per document.
    pub fn openapi_v2_protobuf(&self) -> Result<Bytes> {
        let doc = self.set.openapi_v2();
        let mut cached = self.v2_protobuf.lock();
        Ok(match &*cached {
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
        })
    }

    /// The `/openapi/v3` index.
    pub fn openapi_v3_index(&self) -> Bytes {
        self.set.openapi_v3_index().bytes
    }

    /// The `/openapi/v3/<gv>` document.
    pub fn openapi_v3(&self, path: &str) -> Result<Bytes> {
        let doc = self
            .set
            .openapi_v3(path.trim_matches('/'))
            .ok_or_else(|| ApiError::unknown_path(&format!("/openapi/v3/{path}")))?;
        Ok(doc.bytes)
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

/// Which fields a write of `sub` (or of the main resource) owns.
pub(crate) fn scope(res: &ResourceInfo, sub: Option<&str>) -> Scope {
    match sub {
        None if !res.status => Scope::whole(),
        other => Scope::for_subresource(other),
    }
}
