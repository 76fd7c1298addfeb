//! Which CustomResourceDefinitions the registry serves.
//!
//! The served set is rebuilt from a read of the watch cache, and the cache trails the store: a
//! write the CRD loop has just committed may not be in it yet, while a client may already have
//! seen it. Two rules keep the served set from contradicting what clients see:
//!
//! - One rebuild at a time, with the cache read inside the lock. The cache only moves forward,
//!   so the set written last comes from the newest read. (Unserialized, an older read could land
//!   last: the loop's rebuild right after removing a deleted CRD's last finalizer read the CRD
//!   still cached, the Deleted event's rebuild read it gone and wrote first, and the stale set —
//!   serving the deleted resource — stayed until the next CRD change.)
//! - Marks for the loop's writes in flight. A CRD whose last finalizer is being removed is
//!   *retiring*: unserved before the write and until the cache no longer holds it, however stale
//!   the cache read of a rebuild. A CRD about to be marked Established is *establishing*: served
//!   before the write, so a client that sees Established can use the resource. A mark is dropped
//!   when the cache catches up, or by [`Served::unmark`] when the write fails.

use std::collections::BTreeSet;

use parking_lot::Mutex;
use serde_json::Value;

use super::PREFIX;
use crate::registry::crd::{is_established, resources_for};
use crate::Api;

/// The served set's lock and the loop's marks.
#[derive(Default)]
pub(super) struct Served {
    marks: Mutex<Marks>,
}

#[derive(Default, Debug)]
struct Marks {
    retiring: BTreeSet<String>,
    establishing: BTreeSet<String>,
}

/// What identifies one CRD's life: a CRD deleted and created again under its name is another.
pub(super) fn mark_of(crd: &Value) -> String {
    let meta = |f: &str| {
        crd.pointer(&format!("/metadata/{f}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    format!("{}/{}", meta("name"), meta("uid"))
}

impl Marks {
    /// The CRDs to serve out of `crds` (the cache's, in one read), dropping marks the cache has
    /// caught up with.
    fn select(&mut self, crds: Vec<Value>) -> Vec<Value> {
        let cached: BTreeSet<String> = crds.iter().map(mark_of).collect();
        let established: BTreeSet<String> = crds
            .iter()
            .filter(|c| is_established(c))
            .map(mark_of)
            .collect();
        self.retiring.retain(|m| cached.contains(m));
        self.establishing
            .retain(|m| cached.contains(m) && !established.contains(m));
        crds.into_iter()
            .filter(|c| {
                let m = mark_of(c);
                !self.retiring.contains(&m)
                    && (established.contains(&m) || self.establishing.contains(&m))
            })
            .collect()
    }
}

impl Served {
    /// Rebuild the served custom resources and schemas from the cache and the marks.
    pub(super) fn refresh(&self, api: &Api) {
        let mut marks = self.marks.lock();
        // Read under the lock: see the module docs.
        let (cached, _, _) = api.cache.list(PREFIX, None, None, |_| true);
        let crds = marks.select(cached.iter().map(|c| c.value()).collect());
        let custom = crds.iter().flat_map(resources_for).collect();
        api.set_custom_resources(custom, crds);
    }

    /// Stop serving `crd` before the write removing its last finalizer.
    pub(super) fn retire(&self, api: &Api, crd: &Value) {
        self.marks.lock().retiring.insert(mark_of(crd));
        self.refresh(api);
    }

    /// Serve `crd` before the write marking it Established.
    pub(super) fn establish(&self, api: &Api, crd: &Value) {
        self.marks.lock().establishing.insert(mark_of(crd));
        self.refresh(api);
    }

    /// The write `crd` was marked for failed: serve it as the cache says.
    pub(super) fn unmark(&self, api: &Api, crd: &Value) {
        {
            let mut marks = self.marks.lock();
            let m = mark_of(crd);
            marks.retiring.remove(&m);
            marks.establishing.remove(&m);
        }
        self.refresh(api);
    }
}

#[cfg(test)]
mod tests;
