//! Objects as served: the stored bytes converted to the version (and shape) of the resource
//! asked for, or cut down to their metadata.

use bytes::Bytes;
use serde_json::{json, Value};

use crate::cache::CachedObject;
use crate::registry::{storage, ResourceInfo};

/// The object's bytes as served at `res`'s version. Custom resources are stored at one version
/// and served at all of theirs (conversion strategy None: only apiVersion changes); a resource
/// sharing another API's storage is converted (see [`crate::registry::storage`]).
pub(crate) fn output(res: &ResourceInfo, o: &CachedObject) -> Bytes {
    output_raw(res, &o.raw)
}

/// As [`output`], for stored bytes.
pub(crate) fn output_raw(res: &ResourceInfo, raw: &Bytes) -> Bytes {
    if !res.custom && !storage::converts(res) {
        return raw.clone();
    }
    let v: Value = serde_json::from_slice(raw).unwrap_or(Value::Null);
    let as_stored = res.read_defaults.is_none();
    if res.custom && as_stored && v["apiVersion"].as_str() == Some(res.api_version().as_str()) {
        return raw.clone();
    }
    Bytes::from(serde_json::to_vec(&output_value(res, v)).unwrap_or_default())
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

/// The `PartialObjectMetadata` view of an object.
pub(crate) fn partial_metadata(res: &ResourceInfo, o: &CachedObject) -> Value {
    let v = o.value();
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": v.get("metadata").cloned().unwrap_or(json!({})),
        // Clients use the object's own GVK from the list; keep it on each item too.
        "__gvk": res.api_version(),
    })
}
