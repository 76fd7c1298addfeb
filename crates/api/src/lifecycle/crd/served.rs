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
mod tests {
    use serde_json::json;

    use super::*;

    fn crd(name: &str, uid: &str, established: bool) -> Value {
        let status = if established { "True" } else { "False" };
        json!({"metadata": {"name": name, "uid": uid},
               "status": {"conditions": [{"type": "Established", "status": status}]}})
    }

    fn names(v: &[Value]) -> Vec<String> {
        v.iter().map(mark_of).collect()
    }

    #[test]
    fn marks_override_the_cache_until_it_catches_up() {
        let a = crd("a.x", "1", true);
        let a_pending = crd("a.x", "1", false);
        let a_again = crd("a.x", "2", true);
        let b = crd("b.x", "3", true);
        struct Case {
            what: &'static str,
            retiring: &'static [&'static str],
            establishing: &'static [&'static str],
            cache: Vec<Value>,
            served: &'static [&'static str],
            retiring_after: &'static [&'static str],
            establishing_after: &'static [&'static str],
        }
        let cases = [
            Case {
                what: "established CRDs are served",
                retiring: &[],
                establishing: &[],
                cache: vec![a.clone(), b.clone()],
                served: &["a.x/1", "b.x/3"],
                retiring_after: &[],
                establishing_after: &[],
            },
            Case {
                what: "not established: not served",
                retiring: &[],
                establishing: &[],
                cache: vec![a_pending.clone()],
                served: &[],
                retiring_after: &[],
                establishing_after: &[],
            },
            Case {
                what: "retiring, still cached (a read older than the delete): not served",
                retiring: &["a.x/1"],
                establishing: &[],
                cache: vec![a.clone(), b.clone()],
                served: &["b.x/3"],
                retiring_after: &["a.x/1"],
                establishing_after: &[],
            },
            Case {
                what: "retiring, gone from the cache: mark dropped",
                retiring: &["a.x/1"],
                establishing: &[],
                cache: vec![b.clone()],
                served: &["b.x/3"],
                retiring_after: &[],
                establishing_after: &[],
            },
            Case {
                what: "a new CRD of a retired name is another CRD",
                retiring: &["a.x/1"],
                establishing: &[],
                cache: vec![a_again.clone()],
                served: &["a.x/2"],
                retiring_after: &[],
                establishing_after: &[],
            },
            Case {
                what: "establishing, cache not caught up: served, mark kept",
                retiring: &[],
                establishing: &["a.x/1"],
                cache: vec![a_pending.clone()],
                served: &["a.x/1"],
                retiring_after: &[],
                establishing_after: &["a.x/1"],
            },
            Case {
                what: "establishing, cache caught up: served, mark dropped",
                retiring: &[],
                establishing: &["a.x/1"],
                cache: vec![a.clone()],
                served: &["a.x/1"],
                retiring_after: &[],
                establishing_after: &[],
            },
            Case {
                what: "establishing, gone from the cache: mark dropped",
                retiring: &[],
                establishing: &["a.x/1"],
                cache: vec![],
                served: &[],
                retiring_after: &[],
                establishing_after: &[],
            },
        ];
        let set = |s: &[&str]| s.iter().map(|m| m.to_string()).collect::<BTreeSet<_>>();
        for c in cases {
            let mut marks = Marks {
                retiring: set(c.retiring),
                establishing: set(c.establishing),
            };
            let served = marks.select(c.cache);
            assert_eq!(names(&served), c.served, "{}", c.what);
            assert_eq!(marks.retiring, set(c.retiring_after), "{}", c.what);
            assert_eq!(marks.establishing, set(c.establishing_after), "{}", c.what);
        }
    }
}
