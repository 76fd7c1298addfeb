//! Which Work events call for a reconcile: a Work new to the loop, or one whose spec (through
//! its generation), deletion or finalizers changed. A change of its status alone does not: the
//! status is the loop's own writing, and answering each of its writes with a reconcile applied
//! every Work several times over (a hundred thousand member writes for twenty thousand Works).
//!
//! And a reconcile that finds nothing to do does nothing: when the Work is at the generation
//! its last reconcile applied in full, and no member event moved any of its objects since
//! (the member watch's [`Fresh`](crate::apply::Fresh)), neither the member nor the status can
//! need a write. That is the common case of a member event that was the echo of the Work's own
//! write arriving before the write's answer. The periodic resync is never skipped: it is the
//! safety net for events a watch lost.

use std::collections::{HashMap, HashSet};

use flotilla_apis::work::v1alpha1::{ResourceIdentifier, Work};
use kube::runtime::watcher;
use parking_lot::Mutex;

/// What of a Work a reconcile answers to.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Trigger {
    generation: Option<i64>,
    deleting: bool,
    finalizers: Vec<String>,
}

impl Trigger {
    fn of(work: &Work) -> Self {
        Self {
            generation: work.metadata.generation,
            deleting: work.metadata.deletion_timestamp.is_some(),
            finalizers: work.metadata.finalizers.clone().unwrap_or_default(),
        }
    }
}

/// The [`Trigger`] each Work of one namespace was last seen with.
#[derive(Default)]
pub(crate) struct Triggers {
    seen: Mutex<HashMap<String, Trigger>>,
    /// The generation each Work's last reconcile applied in full, and the objects it wrote.
    settled: Mutex<HashMap<String, (i64, Vec<ResourceIdentifier>)>>,
    /// Works queued by the resync, reconciled whatever [`Triggers::settled`] says.
    forced: Mutex<HashSet<String>>,
}

impl Triggers {
    /// The Work `event` calls for reconciling, if any. After a watch restart every Work is
    /// (what changed meanwhile is not known).
    pub(crate) fn triggered(&self, event: &watcher::Event<Work>) -> Option<String> {
        let (work, always) = match event {
            watcher::Event::InitApply(w) => (w, true),
            watcher::Event::Apply(w) => (w, false),
            watcher::Event::Delete(w) => {
                let name = w.metadata.name.as_deref()?;
                self.seen.lock().remove(name);
                self.settled.lock().remove(name);
                return None;
            }
            watcher::Event::Init | watcher::Event::InitDone => return None,
        };
        let name = work.metadata.name.clone()?;
        let trigger = Trigger::of(work);
        let before = self.seen.lock().insert(name.clone(), trigger.clone());
        (always || before.as_ref() != Some(&trigger)).then_some(name)
    }

    /// The resync queues `name`: its next reconcile must not be skipped.
    pub(crate) fn force(&self, name: &str) {
        self.forced.lock().insert(name.to_owned());
    }

    /// The reconcile of `name` applied every manifest of the Work at a generation, writing
    /// these objects (`Some`), or did not (`None`).
    pub(crate) fn applied(&self, name: &str, applied: Option<(i64, Vec<ResourceIdentifier>)>) {
        let mut settled = self.settled.lock();
        match applied {
            Some(a) => settled.insert(name.to_owned(), a),
            None => settled.remove(name),
        };
    }

    /// Whether the reconcile of `name`, now at `generation`, has nothing to do: not forced,
    /// applied in full at that generation, and the objects written then `untouched` (no member
    /// event moved any since).
    pub(crate) fn nothing_to_do(
        &self,
        name: &str,
        generation: Option<i64>,
        untouched: impl FnOnce(&[ResourceIdentifier]) -> bool,
    ) -> bool {
        if self.forced.lock().remove(name) {
            return false;
        }
        let settled = self.settled.lock();
        match (settled.get(name), generation) {
            (Some((at, objects)), Some(g)) if *at == g => untouched(objects),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests;
