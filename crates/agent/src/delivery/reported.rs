//! The status a delivery last wrote to each Work, until its own watch brings the write back.
//!
//! A reconcile reads its Work from the watch's copy. Right after a status write that copy
//! still shows the status before it (the write's event is on its way), and a reconcile that
//! came meanwhile (a member event, which under load is the rule: the member answers faster
//! than the hub's watch) built its status on the older one: every condition a fresh
//! transition time, so a status that differed only in those, written again. Until the watch
//! has caught up with a write, the status that write sent is the one to build on.

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_apis::work::v1alpha1::{Work, WorkStatus};
use parking_lot::Mutex;

/// Per Work name: the status written and the resourceVersion the write returned.
#[derive(Default)]
pub(crate) struct Reported {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The last status written to each Work the watch has not shown yet, and the
    /// resourceVersion its write returned.
    written: HashMap<String, (Arc<WorkStatus>, String)>,
    /// The Works whose status is being written, and the last version the watch showed of
    /// each meanwhile (its event may come before the write's answer).
    writing: HashMap<String, Option<String>>,
}

// === impl Reported ===

impl Reported {
    /// The status to build on for `work` as the watch shows it: the last one written, if the
    /// watch has not shown that write yet; `None` to use the watch's.
    pub(crate) fn newer_than(&self, work: &Work) -> Option<Arc<WorkStatus>> {
        let name = work.metadata.name.as_deref()?;
        let state = self.state.lock();
        let (status, rv) = state.written.get(name)?;
        (work.metadata.resource_version.as_deref() != Some(rv.as_str())).then(|| status.clone())
    }

    /// A status write to Work `name` starts.
    pub(crate) fn writing(&self, name: &str) {
        self.state.lock().writing.insert(name.to_owned(), None);
    }

    /// The status write to Work `name` ended: it wrote `status` (`None`: it failed), and the
    /// Work then had `resource_version`.
    pub(crate) fn wrote(
        &self,
        name: &str,
        status: Option<WorkStatus>,
        resource_version: Option<String>,
    ) {
        let mut state = self.state.lock();
        let shown = state.writing.remove(name).flatten();
        match (status, resource_version) {
            // The watch showed the write before its answer came: nothing to remember.
            (Some(_), Some(rv)) if shown.as_deref() == Some(rv.as_str()) => {
                state.written.remove(name);
            }
            (Some(status), Some(rv)) => {
                state
                    .written
                    .insert(name.to_owned(), (Arc::new(status), rv));
            }
            _ => {
                state.written.remove(name);
            }
        }
    }

    /// The watch lists again: whatever it shows now is at least as new as every write.
    pub(crate) fn relisted(&self) {
        self.state.lock().written.clear();
    }

    /// The watch shows Work `name` at `resource_version` (`None`: deleted).
    pub(crate) fn seen(&self, name: &str, resource_version: Option<&str>) {
        let mut state = self.state.lock();
        if let Some(shown) = state.writing.get_mut(name) {
            *shown = resource_version.map(str::to_owned);
        }
        let caught_up = match (state.written.get(name), resource_version) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some((_, rv)), Some(shown)) => rv == shown,
        };
        if caught_up {
            state.written.remove(name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work(name: &str, rv: &str) -> Work {
        let mut w = Work::new(name, Default::default());
        w.metadata.resource_version = Some(rv.into());
        w
    }

    fn status(message: &str) -> WorkStatus {
        serde_json::from_value(serde_json::json!({"conditions": [
            {"type": "Applied", "status": "True", "reason": "Applied", "message": message,
             "lastTransitionTime": "2026-12-06T00:00:00Z"}
        ]}))
        .unwrap()
    }

    #[test]
    fn the_written_status_counts_until_the_watch_shows_the_write() {
        let r = Reported::default();
        r.writing("w");
        r.seen("w", Some("5"));
        r.wrote("w", Some(status("one")), Some("7".into()));
        // The watch still shows version 5: build on what was written.
        assert_eq!(
            r.newer_than(&work("w", "5")).as_deref(),
            Some(&status("one"))
        );
        // Another Work is not concerned.
        assert!(r.newer_than(&work("v", "5")).is_none());
        // The write's own event arrives: from now on the watch's copy is as new.
        r.seen("w", Some("7"));
        assert!(r.newer_than(&work("w", "9")).is_none());
    }

    #[test]
    fn a_write_the_watch_has_already_shown_is_not_kept() {
        let r = Reported::default();
        r.writing("w");
        r.seen("w", Some("7"));
        r.wrote("w", Some(status("one")), Some("7".into()));
        // A later change (someone else's) must not be hidden by the memory of the write.
        assert!(r.newer_than(&work("w", "8")).is_none());
    }

    #[test]
    fn deletion_and_unknown_versions_forget() {
        let r = Reported::default();
        r.writing("w");
        r.wrote("w", Some(status("one")), Some("7".into()));
        r.seen("w", None);
        assert!(r.newer_than(&work("w", "5")).is_none());
        r.writing("w");
        r.wrote("w", Some(status("one")), None);
        assert!(r.newer_than(&work("w", "5")).is_none());
        // A failed write forgets what an earlier one left.
        r.writing("w");
        r.wrote("w", Some(status("one")), Some("7".into()));
        r.writing("w");
        r.wrote("w", None, None);
        assert!(r.newer_than(&work("w", "5")).is_none());
        // A relist shows everything as new as it is.
        r.writing("w");
        r.wrote("w", Some(status("one")), Some("7".into()));
        r.relisted();
        assert!(r.newer_than(&work("w", "5")).is_none());
    }
}
