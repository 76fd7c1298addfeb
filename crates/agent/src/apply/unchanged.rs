//! What the applier last wrote of each object, so that a reconcile finding the member's copy
//! as it was left writes nothing.
//!
//! Most reconciles of a settled Work are caused by the member itself: its controllers write a
//! workload's status, the member watch queues the Work, and the reconcile must read the object
//! back for the Work's status. Applying the manifest again would change nothing, yet a
//! server-side apply is the most expensive request a member serves (and, for a hub's push
//! workers, one of the most expensive the hub makes). So the applier keeps, per object, the Work
//! generation it applied and the object's uid and generation after the write; an object read
//! back with the same uid and generation, for a Work still at that generation, with flotilla's
//! labels and annotations still on it, has not been changed in any field the manifest sets (a
//! change to an object's spec moves its generation), and is only read. Karmada's execution
//! controller decides the same way (the object's generation, or its resourceVersion when it has
//! none). Objects without a generation (ConfigMaps, Secrets, Services) are always applied.

use std::collections::HashMap;

use kube::api::DynamicObject;
use parking_lot::Mutex;
use serde_json::Value;

/// The metadata fields a manifest may set that this check understands; a manifest setting any
/// other (finalizers, owner references) is always applied.
const UNDERSTOOD_METADATA: [&str; 4] = ["name", "namespace", "labels", "annotations"];

/// One object as the applier left it.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Record {
    work_generation: i64,
    uid: String,
    generation: i64,
}

/// The records of one member, by `resource/namespace/name`.
#[derive(Default)]
pub(crate) struct Written {
    records: Mutex<HashMap<String, Record>>,
}

/// The key of an object in [`Written`].
pub(crate) fn key(resource: &str, namespace: Option<&str>, name: &str) -> String {
    format!("{resource}/{}/{name}", namespace.unwrap_or_default())
}

impl Written {
    /// `object` is what the member answered to writing manifest `key` of a Work at
    /// `work_generation`.
    pub(crate) fn wrote(&self, key: String, work_generation: Option<i64>, object: &DynamicObject) {
        let record = work_generation.zip(object.metadata.generation).and_then(
            |(work_generation, generation)| {
                Some(Record {
                    work_generation,
                    uid: object.metadata.uid.clone()?,
                    generation,
                })
            },
        );
        let mut records = self.records.lock();
        match record {
            Some(r) => {
                records.insert(key, r);
            }
            None => {
                records.remove(&key);
            }
        }
    }

    /// Forget `key` (its object was removed from the member).
    pub(crate) fn forget(&self, key: &str) {
        self.records.lock().remove(key);
    }

    /// Whether `existing`, the member's copy of `key`, is still as the applier left it for a
    /// Work now at `work_generation` whose (marked) manifest is `manifest`.
    pub(crate) fn unchanged(
        &self,
        key: &str,
        work_generation: Option<i64>,
        existing: &DynamicObject,
        manifest: &Value,
    ) -> bool {
        let Some(record) = self.records.lock().get(key).cloned() else {
            return false;
        };
        Some(record.work_generation) == work_generation
            && existing.metadata.uid.as_deref() == Some(record.uid.as_str())
            && existing.metadata.generation == Some(record.generation)
            && metadata_kept(manifest, existing)
    }
}

/// Whether every label and annotation `manifest` sets is on `existing` with the same value,
/// and the manifest sets no metadata this check does not understand.
fn metadata_kept(manifest: &Value, existing: &DynamicObject) -> bool {
    let Some(meta) = manifest.get("metadata").and_then(Value::as_object) else {
        return true;
    };
    if meta
        .keys()
        .any(|k| !UNDERSTOOD_METADATA.contains(&k.as_str()))
    {
        return false;
    }
    let kept = |field: &str, have: Option<&std::collections::BTreeMap<String, String>>| {
        meta.get(field)
            .and_then(Value::as_object)
            .is_none_or(|want| {
                want.iter().all(|(k, v)| {
                    v.as_str()
                        .is_some_and(|v| have.and_then(|h| h.get(k)).map(String::as_str) == Some(v))
                })
            })
    };
    kept("labels", existing.metadata.labels.as_ref())
        && kept("annotations", existing.metadata.annotations.as_ref())
}

#[cfg(test)]
mod tests;
