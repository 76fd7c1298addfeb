//! Objects as served: the stored bytes converted to the version (and shape) of the resource
//! asked for, or cut down to their metadata.

use bytes::Bytes;
use serde_json::Value;

use crate::cache::CachedObject;
use crate::registry::{storage, ResourceInfo};
use crate::Api;

/// The object's bytes as served at `res`'s version. Custom resources are stored at one version
/// and served at all of theirs (conversion strategy None: only apiVersion changes); a resource
/// sharing another API's storage is converted (see [`crate::registry::storage`]).
pub(crate) fn output(res: &ResourceInfo, o: &CachedObject) -> Bytes {
    // A custom resource stored at the version served whose read defaults change nothing (it
    // was defaulted when written, with the same schema) is served as stored; the object
    // remembers the answer, so a change fanned out to many watchers is parsed once, not once
    // per watcher.
    // (One look at the apiVersion decides both cases here: output_raw would look again.)
    let raw = o.raw();
    if res.custom && stored_at(&raw, res) {
        let as_stored = match &res.read_defaults {
            None => true,
            Some(defaults) => !o.changed_by_defaults(defaults, || {
                defaults.changes(&serde_json::from_slice(&raw).unwrap_or(Value::Null))
            }),
        };
        if as_stored {
            return raw;
        }
    }
    output_raw(res, &raw)
}

/// As [`output_raw`], for an object this replica has just stored at `key`: when its write
/// told the cache whether the read defaults change it ([`crate::cache::Cache::known_defaults`]),
/// one stored at the version served is answered as stored, not parsed again.
pub(crate) fn output_written(api: &Api, res: &ResourceInfo, key: &str, raw: &Bytes) -> Bytes {
    if let Some(defaults) = res.read_defaults.as_ref().filter(|_| res.custom) {
        if stored_at(raw, res) && api.cache.known_defaults(key, raw, defaults) == Some(false) {
            return raw.clone();
        }
    }
    output_raw(res, raw)
}

/// As [`output`], for stored bytes.
pub(crate) fn output_raw(res: &ResourceInfo, raw: &Bytes) -> Bytes {
    if !res.custom && !storage::converts(res) {
        return raw.clone();
    }
    // Every GET, LIST item and watch event of a custom resource comes here: one stored at the
    // version served, with no defaults to add, is served as stored after a glance at its
    // apiVersion, not a parse of the whole object.
    if res.custom && res.read_defaults.is_none() && stored_at(raw, res) {
        return raw.clone();
    }
    let v: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
    Bytes::from(serde_json::to_vec(&output_value(res, v)).unwrap_or_default())
}

/// Is the stored object `raw` at `res`'s group/version? Reads only its `apiVersion` (the other
/// fields are skipped, not built).
fn stored_at(raw: &[u8], res: &ResourceInfo) -> bool {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow, rename = "apiVersion")]
        api_version: Option<std::borrow::Cow<'a, str>>,
    }
    let Ok(head) = serde_json::from_slice::<Head<'_>>(raw) else {
        return false;
    };
    let Some(av) = head.api_version else {
        return false;
    };
    match av.split_once('/') {
        Some((group, version)) => group == res.group && version == res.version,
        None => res.group.is_empty() && av == res.version,
    }
}

/// As [`output`], for an object already parsed (stored or already served: both are fine).
pub(crate) fn output_value(res: &ResourceInfo, mut v: Value) -> Value {
    if res.custom {
        v["apiVersion"] = Value::String(res.api_version());
        crate::admission::schema::on_read::apply(res, &mut v);
        return v;
    }
    storage::from_storage(res, v)
}

/// The `PartialObjectMetadata` view of an object, as JSON: its metadata copied from the stored
/// bytes (the other fields are skipped, not built, so a metadata LIST of many large objects
/// holds only what it answers).
pub(crate) fn partial_metadata(o: &CachedObject) -> Bytes {
    #[derive(serde::Deserialize)]
    struct Head<'a> {
        #[serde(borrow)]
        metadata: Option<&'a serde_json::value::RawValue>,
    }
    let raw = o.raw();
    let meta = serde_json::from_slice::<Head<'_>>(&raw)
        .ok()
        .and_then(|h| h.metadata)
        .map_or("{}", |m| m.get());
    let head = br#"{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":"#;
    let mut buf = Vec::with_capacity(head.len() + meta.len() + 1);
    buf.extend_from_slice(head);
    buf.extend_from_slice(meta.as_bytes());
    buf.push(b'}');
    Bytes::from(buf)
}

#[cfg(test)]
mod tests;
