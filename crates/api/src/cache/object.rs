//! One cached object: the stored JSON bytes plus the few fields every list and watch filters on.
//!
//! Objects of [`COMPRESS_FROM`] bytes or more are kept LZ4-compressed: the cache holds every
//! object the hub stores, and with 10,000 Deployments propagated to three clusters that is
//! 50,000 objects of about 4 KB of JSON each (a Work's manifest, every object's managedFields),
//! which LZ4 halves, and given earlier objects of the same resource as a dictionary
//! ([`dict`]) takes to a fifth or less. Reading one back costs a few microseconds; small
//! objects (Leases renewed every few seconds, most RBAC objects) are kept as they are.

mod dict;

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
    /// The JSON bytes, exactly as stored (resourceVersion included), perhaps compressed.
    stored: Stored,
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

/// Objects this large or larger are kept compressed.
pub const COMPRESS_FROM: usize = 1024;

/// How the bytes of an object are kept.
enum Stored {
    /// As they are.
    Plain(Bytes),
    /// LZ4 block-compressed, with the length of the bytes in front.
    Lz4(Box<[u8]>),
    /// As `Lz4`, with the resource's dictionary.
    Lz4Dict(Arc<[u8]>, Box<[u8]>),
}

impl std::fmt::Debug for Stored {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stored::Plain(b) => write!(f, "Plain({} bytes)", b.len()),
            Stored::Lz4(b) => write!(f, "Lz4({} bytes)", b.len()),
            Stored::Lz4Dict(_, b) => write!(f, "Lz4Dict({} bytes)", b.len()),
        }
    }
}

impl Stored {
    fn keep(key: &str, raw: Bytes) -> Stored {
        if raw.len() < COMPRESS_FROM {
            return Stored::Plain(raw);
        }
        let dict = dict::for_key(key, &raw);
        match (flotilla_compress::pack(&raw, dict.as_deref()), dict) {
            (None, _) => Stored::Plain(raw),
            (Some(packed), Some(d)) => Stored::Lz4Dict(d, packed.into_boxed_slice()),
            (Some(packed), None) => Stored::Lz4(packed.into_boxed_slice()),
        }
    }
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
            stored: Stored::keep(&key, raw),
            key,
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

    /// The JSON bytes, exactly as stored (resourceVersion included).
    pub fn raw(&self) -> Bytes {
        let unpacked = match &self.stored {
            Stored::Plain(b) => return b.clone(),
            Stored::Lz4(packed) => flotilla_compress::unpack(packed, None),
            Stored::Lz4Dict(dict, packed) => flotilla_compress::unpack(packed, Some(dict)),
        };
        match unpacked {
            Ok(b) => Bytes::from(b),
            Err(e) => {
                // Compressed by this process a moment ago: only corrupted memory gets here.
                tracing::error!(key = %self.key, error = %e, "a cached object does not decompress");
                Bytes::from_static(b"null")
            }
        }
    }

    /// The length of the object's JSON bytes.
    pub fn raw_len(&self) -> usize {
        match &self.stored {
            Stored::Plain(b) => b.len(),
            Stored::Lz4(packed) | Stored::Lz4Dict(_, packed) => {
                flotilla_compress::unpacked_len(packed)
            }
        }
    }

    /// Whether the object's bytes are `bytes`.
    pub fn is(&self, bytes: &[u8]) -> bool {
        match &self.stored {
            Stored::Plain(b) => b[..] == *bytes,
            // The length first: most differing objects differ in length.
            _ => self.raw_len() == bytes.len() && self.raw()[..] == *bytes,
        }
    }

    /// How many bytes the cache holds for this object's JSON.
    pub fn held_bytes(&self) -> usize {
        match &self.stored {
            Stored::Plain(b) => b.len(),
            Stored::Lz4(packed) | Stored::Lz4Dict(_, packed) => packed.len(),
        }
    }

    /// About how much memory this object takes: its bytes, key and name, and the fixed part.
    pub fn footprint(&self) -> usize {
        self.held_bytes()
            + self.key.len()
            + self.name.len()
            + self
                .labels
                .iter()
                .map(|(k, v)| k.len() + v.len() + 32)
                .sum::<usize>()
            + std::mem::size_of::<Self>()
            + 64
    }

    /// The whole object, parsed.
    pub fn value(&self) -> Value {
        // The bytes were parsed once already when the object was indexed, so this cannot fail
        // unless memory is corrupted; fall back to null rather than panic in a request path.
        serde_json::from_slice(&self.raw()).unwrap_or(Value::Null)
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
