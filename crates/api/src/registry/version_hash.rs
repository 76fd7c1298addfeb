//! Discovery's `storageVersionHash`: which version a resource's objects are stored in, as an
//! opaque token clients (the storage-version migrator, `kube-storage-version-migrator`, the
//! upstream e2e suite) compare to see whether stored objects need rewriting.
//!
//! kube-apiserver computes it from the storage version's group, version and kind: the first 8
//! bytes of the SHA-256 of `<group>/<version>/<kind>`, base64 (standard alphabet, padded). A
//! custom resource is stored in the CRD version marked `storage: true` (whether or not it is
//! served); a built-in in its group's highest-priority version, or in the API it shares
//! storage with (events.k8s.io Events are core Events). Resources with no storage of their
//! own (reviews, which are only created) have no hash.

use base64::Engine;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::crd::version_priority;
use super::storage::storage_group;
use super::{ResourceInfo, Snapshot};

/// The hash of one group/version/kind, as kube-apiserver computes it.
pub fn hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// The version a CRD stores its objects in (`spec.versions[].storage: true`).
pub fn crd_storage_version(crd: &Value) -> Option<&str> {
    crd.pointer("/spec/versions")?
        .as_array()?
        .iter()
        .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))?
        .get("name")?
        .as_str()
}

/// The `storageVersionHash` discovery shows for `r`. `crd_of` finds the CRD serving a custom
/// resource (by `<plural>.<group>`).
pub fn for_resource(
    snap: &Snapshot,
    r: &ResourceInfo,
    crd_of: impl Fn(&str) -> Option<Value>,
) -> Option<String> {
    // A resource without watch is not stored (reviews, componentstatuses): kube gives none.
    if !r.verbs.contains(&"watch") {
        return None;
    }
    if r.custom {
        let crd = crd_of(&r.group_resource())?;
        let version = crd_storage_version(&crd)?;
        return Some(hash(&r.group, version, &r.kind));
    }
    let group = storage_group(&r.group, &r.plural);
    if group != r.group {
        return Some(hash(group, &r.version, &r.kind));
    }
    // The group's few versions, each looked up: discovery asks this of every resource it
    // lists, so a scan of every served resource here would make discovery quadratic.
    let versions = snap
        .groups()
        .iter()
        .find(|(g, _)| *g == r.group)
        .map(|(_, vs)| vs.as_slice())
        .unwrap_or_default();
    let version = versions
        .iter()
        .filter(|v| snap.get(&r.group, v, &r.plural).is_some_and(|o| !o.custom))
        .map(String::as_str)
        .min_by(|a, b| version_priority(a, b))
        .unwrap_or(&r.version);
    Some(hash(&r.group, version, &r.kind))
}

#[cfg(test)]
mod tests;
