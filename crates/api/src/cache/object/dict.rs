//! Compression dictionaries, one per resource: the first objects of the resource the cache
//! keeps compressed.
//!
//! Objects of one resource repeat each other far more than any one of them repeats itself:
//! the field names, annotation keys, a manifest's shape and the managedFields of the same
//! managers are in every Work, and only names, uids, hashes and times differ. Given earlier
//! objects of its resource as a dictionary, LZ4 finds those repeats too.
//!
//! A resource's dictionary ([`Dictionary`]) is learned from its first objects worth
//! compressing and never changes after. It is shared by every cache in the process (the
//! simulator runs one per member cluster). Secrets get none: a dictionary outlives the objects
//! it was learned from.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use flotilla_compress::Dictionary;
use parking_lot::Mutex;

static DICTS: LazyLock<Mutex<HashMap<Box<str>, Dictionary>>> = LazyLock::new(Mutex::default);

/// The dictionary for objects stored under `key`, once there is one; until then `raw`, an
/// object stored there, is learned from.
pub(super) fn for_key(key: &str, raw: &[u8]) -> Option<Arc<[u8]>> {
    let resource = resource(key)?;
    let mut dicts = DICTS.lock();
    match dicts.get_mut(resource) {
        Some(d) => d.learn(raw),
        None => dicts.entry(resource.into()).or_default().learn(raw),
    }
}

/// The resource part of a storage key (`/registry/<group>/<plural>/`), unless it is one whose
/// objects must not outlive their deletion.
fn resource(key: &str) -> Option<&str> {
    let (end, _) = key.match_indices('/').nth(3)?;
    let resource = &key[..=end];
    (resource != "/registry/core/secrets/").then_some(resource)
}

#[cfg(test)]
mod tests;
