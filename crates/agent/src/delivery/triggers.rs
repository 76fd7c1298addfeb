//! Which Work events call for a reconcile: a Work new to the loop, or one whose spec (through
//! its generation), deletion or finalizers changed. A change of its status alone does not: the
//! status is the loop's own writing, and answering each of its writes with a reconcile applied
//! every Work several times over (a hundred thousand member writes for twenty thousand Works).

use std::collections::HashMap;

use flotilla_apis::work::v1alpha1::Work;
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
}

impl Triggers {
    /// The Work `event` calls for reconciling, if any. After a watch restart every Work is
    /// reconciled (what changed meanwhile is not known).
    pub(crate) fn triggered(&self, event: &watcher::Event<Work>) -> Option<String> {
        let (work, always) = match event {
            watcher::Event::InitApply(w) => (w, true),
            watcher::Event::Apply(w) => (w, false),
            watcher::Event::Delete(w) => {
                self.seen.lock().remove(w.metadata.name.as_deref()?);
                return None;
            }
            watcher::Event::Init | watcher::Event::InitDone => return None,
        };
        let name = work.metadata.name.clone()?;
        let trigger = Trigger::of(work);
        let before = self.seen.lock().insert(name.clone(), trigger.clone());
        (always || before.as_ref() != Some(&trigger)).then_some(name)
    }
}

#[cfg(test)]
mod tests;
