//! One cached object: the stored JSON bytes plus the few fields every list and watch filters on.

use bytes::Bytes;
use serde::Deserialize;
use serde_json::Value;

use flotilla_store::Revision;

/// An object as the cache keeps it.
#[derive(Debug)]
pub struct CachedObject {
    /// Storage key.
    pub key: String,
    /// The JSON bytes, exactly as stored (resourceVersion included).
    pub raw: Bytes,
    /// Revision of the last change.
    pub mod_revision: Revision,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`, if any.
    pub namespace: Option<String>,
    /// `metadata.labels`.
    pub labels: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    metadata: Meta,
}

#[derive(Deserialize, Default)]
struct Meta {
    #[serde(default)]
    name: String,
    namespace: Option<String>,
    #[serde(default)]
    labels: std::collections::BTreeMap<String, String>,
}

impl CachedObject {
    /// Index a stored object.
    pub fn new(key: String, raw: Bytes, mod_revision: Revision) -> serde_json::Result<Self> {
        let head: Head = serde_json::from_slice(&raw)?;
        Ok(CachedObject {
            key,
            raw,
            mod_revision,
            name: head.metadata.name,
            namespace: head.metadata.namespace,
            labels: head.metadata.labels,
        })
    }

    /// The label value for `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels.get(key).map(String::as_str)
    }

    /// The whole object, parsed.
    pub fn value(&self) -> Value {
        // The bytes were parsed once already when the object was indexed, so this cannot fail
        // unless memory is corrupted; fall back to null rather than panic in a request path.
        serde_json::from_slice(&self.raw).unwrap_or(Value::Null)
    }
}
