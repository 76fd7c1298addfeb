//! Compression dictionaries, one per resource: the first objects of the resource the cache
//! keeps compressed.
//!
//! Objects of one resource repeat each other far more than any one of them repeats itself:
//! the field names, annotation keys, a manifest's shape and the managedFields of the same
//! managers are in every Work, and only names, uids, hashes and times differ. Given earlier
//! objects of its resource as a dictionary, LZ4 finds those repeats too.
//!
//! A dictionary is learned from the first [`SAMPLES`] objects of a resource worth compressing
//! and never changes after (each object compressed with it holds it by an `Arc`). It is
//! shared by every cache in the process (the simulator runs one per member cluster). Secrets
//! get none: a dictionary outlives the objects it was learned from.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use parking_lot::Mutex;

/// How many objects a dictionary is learned from.
const SAMPLES: usize = 4;
/// The most a dictionary holds (LZ4 reaches back 64 KB at most).
const MOST: usize = 32 * 1024;

enum Dict {
    /// Samples so far, and how many.
    Learning(Vec<u8>, usize),
    Ready(Arc<[u8]>),
}

static DICTS: LazyLock<Mutex<HashMap<Box<str>, Dict>>> = LazyLock::new(Mutex::default);

/// The dictionary for objects stored under `key`, once there is one; until then `raw`, an
/// object stored there, is learned from.
pub(super) fn for_key(key: &str, raw: &[u8]) -> Option<Arc<[u8]>> {
    let resource = resource(key)?;
    let mut dicts = DICTS.lock();
    if let Some(Dict::Ready(d)) = dicts.get(resource) {
        return Some(d.clone());
    }
    let entry = dicts
        .entry(resource.into())
        .or_insert_with(|| Dict::Learning(Vec::new(), 0));
    if let Dict::Learning(samples, n) = entry {
        samples.extend_from_slice(&raw[..raw.len().min(MOST - samples.len())]);
        *n += 1;
        if *n == SAMPLES || samples.len() == MOST {
            *entry = Dict::Ready(std::mem::take(samples).into());
        }
    }
    None
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
