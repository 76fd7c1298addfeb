//! Schemas of the kinds the hub serves and the OpenAPI documents clients read (admission
//! validates objects against them: [`crate::admission::schema`]).
//!
//! Everything here comes from real Kubernetes schemas, never from hand-typed ones:
//! k8s-openapi supplies structure, types and descriptions (through `schemars`); the generated
//! [`k8s_generated`] table (from k8s-pb's prost sources, see `tools/k8s-codegen`; the protobuf
//! decoder reads the same table) supplies the patch/list/map markers k8s-openapi lacks; custom
//! resources bring their own schema in their CRD.
//!
//! - [`Catalog`]: the built-in kinds' definitions (OpenAPI v2 shape, `#/definitions/` refs), built
//!   once at startup from the one table in `kinds.rs`.
//! - [`crd_schemas`]: a CRD's served versions as definitions named the way Kubernetes names them.
//! - [`SchemaSet`]: the catalog plus the live CRDs; answers [`lookup::SchemaLookup`] (for
//!   strategic merge patch and server-side apply) and renders `/openapi/v2` and
//!   `/openapi/v3[/<group-version>]` as cached, pre-serialized [`Document`]s, rebuilt lazily
//!   after a CRD changes.
//! - [`message`], [`message_for_openapi`]: lookups over the generated message table.
//!
//! Type names handed out by the lookup are definition names (`io.k8s.api.apps.v1.Deployment`),
//! optionally followed by `#` and a JSON pointer into that definition for inline schemas
//! (`com.example.stable.v1.CronTab#/properties/spec`).

pub mod lookup;

#[rustfmt::skip]
pub mod k8s_generated;

mod catalog;
mod crd;
mod fixups;
mod kinds;
mod messages;
mod openapi_v2;
mod openapi_v3;
mod paths;
mod refs;
mod set;
mod walk;

#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Value};

pub use catalog::Catalog;
pub use crd::{crd_schemas, definition_name, CrdSchemas, CrdVersion};
pub use messages::{message, message_for_openapi};
pub use set::{SchemaSet, Snapshot};

/// Errors of this module.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A CRD lacks a field its schemas need, or has it in the wrong shape.
    #[error("invalid CustomResourceDefinition: {0}")]
    InvalidCrd(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A group, version and kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvk {
    /// API group, empty for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl Gvk {
    /// A GVK from its parts.
    pub fn new(group: &str, version: &str, kind: &str) -> Gvk {
        Gvk {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
        }
    }

    /// The `x-kubernetes-group-version-kind` element for this GVK (keys in Kubernetes' order).
    pub fn to_json(&self) -> Value {
        json!({ "group": self.group, "kind": self.kind, "version": self.version })
    }

    /// The OpenAPI v3 path of its group-version: `api/v1` or `apis/<group>/<version>`.
    pub fn gv_path(&self) -> String {
        gv_path(&self.group, &self.version)
    }
}

impl fmt::Display for Gvk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}/{}", self.version, self.kind)
        } else {
            write!(f, "{}/{}/{}", self.group, self.version, self.kind)
        }
    }
}

/// `api/v1` for the core group, `apis/<group>/<version>` otherwise.
pub fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// A serialized OpenAPI document and the hash of its bytes (upper-case hex SHA-512, as
/// kube-apiserver uses for `?hash=` and `ETag`). Cheap to clone.
#[derive(Clone, Debug)]
pub struct Document {
    /// The JSON bytes.
    pub bytes: Bytes,
    /// Content hash; quote it for an `ETag` header.
    pub hash: Arc<str>,
}

impl Document {
    /// Serialize `value` and hash the result.
    pub(crate) fn from_value(value: &Value) -> Document {
        let bytes = match serde_json::to_vec(value) {
            Ok(b) => b,
            // A `Value` has string keys and finite numbers only, so serializing it cannot fail.
            Err(e) => unreachable!("serializing a serde_json::Value failed: {e}"),
        };
        Document::from_bytes(bytes)
    }

    fn from_bytes(bytes: Vec<u8>) -> Document {
        use sha2::Digest as _;
        use std::fmt::Write as _;
        let digest = sha2::Sha512::digest(&bytes);
        let mut hash = String::with_capacity(digest.len() * 2);
        for b in digest {
            // Writing to a String cannot fail.
            let _ = write!(hash, "{b:02X}");
        }
        Document {
            bytes: Bytes::from(bytes),
            hash: hash.into(),
        }
    }
}
