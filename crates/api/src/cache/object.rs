//! One cached object: the stored JSON bytes plus the few fields every list and watch filters on.

use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::Value;

use flotilla_store::Revision;

use crate::admission::schema::on_read::ReadDefaults;

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
    /// `metadata.labels`, sorted by key (a map of one or two labels, as most objects have,
    /// would allocate room for eleven).
    labels: Box<[(Box<str>, Box<str>)]>,
    /// Whether a schema's read defaults (the one held) change this object: found once, then
    /// every watcher, GET and LIST of it serves the stored bytes without parsing them again.
    defaulted: Mutex<Option<(Arc<ReadDefaults>, bool)>>,
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
            labels: head
                .metadata
                .labels
                .into_iter()
                .map(|(k, v)| (k.into_boxed_str(), v.into_boxed_str()))
                .collect(),
            defaulted: Mutex::new(None),
        })
    }

    /// Whether the read defaults `schema` change this object, `changes` telling the first
    /// time it is asked for those defaults (a CRD whose defaults changed since is asked anew).
    /// Defaults are compared by content: each rebuild of the served resources (any CRD event)
    /// makes new ones, and watchers started before and after it hold different copies.
    pub fn changed_by_defaults(
        &self,
        schema: &Arc<ReadDefaults>,
        changes: impl FnOnce() -> bool,
    ) -> bool {
        if let Some(changed) = self.known_defaults(schema) {
            return changed;
        }
        // Worked out without the lock held: two readers at once may both ask, and agree.
        let changed = changes();
        *self.defaulted.lock() = Some((schema.clone(), changed));
        changed
    }

    /// What [`CachedObject::changed_by_defaults`] found for `schema`, if it was asked.
    pub fn known_defaults(&self, schema: &Arc<ReadDefaults>) -> Option<bool> {
        match &*self.defaulted.lock() {
            Some((known, changed)) if same_defaults(known, schema) => Some(*changed),
            _ => None,
        }
    }

    /// The label value for `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        // From a BTreeMap, so sorted by key.
        let i = self.labels.binary_search_by(|(k, _)| (**k).cmp(key)).ok()?;
        Some(&self.labels[i].1)
    }

    /// The whole object, parsed.
    pub fn value(&self) -> Value {
        // The bytes were parsed once already when the object was indexed, so this cannot fail
        // unless memory is corrupted; fall back to null rather than panic in a request path.
        serde_json::from_slice(&self.raw).unwrap_or(Value::Null)
    }
}

impl crate::selector::label::Labels for CachedObject {
    fn label(&self, key: &str) -> Option<&str> {
        CachedObject::label(self, key)
    }
}

/// Whether two read defaults are the same: the same `Arc` (served resources keep theirs while
/// unchanged), or equal.
pub(super) fn same_defaults(a: &Arc<ReadDefaults>, b: &Arc<ReadDefaults>) -> bool {
    Arc::ptr_eq(a, b) || **a == **b
}
