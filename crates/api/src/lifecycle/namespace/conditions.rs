//! The `status.conditions` Kubernetes' namespace controller keeps on a terminating namespace
//! (`pkg/controller/namespace/deletion/status_condition_utils.go`): one condition per step of
//! the deletion, `False` with an all-is-well reason when the step is fine, `True` with what is
//! in the way when it is not.

use std::collections::BTreeMap;

use serde_json::{json, Value};

/// The conditions, in the order the controller writes them, with their all-is-well reason and
/// message.
const TYPES: &[(&str, &str, &str)] = &[
    (
        "NamespaceDeletionDiscoveryFailure",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    ),
    (
        "NamespaceDeletionGroupVersionParsingFailure",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    ),
    (
        "NamespaceDeletionContentFailure",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    ),
    (
        "NamespaceContentRemaining",
        "ContentRemoved",
        "All content successfully removed",
    ),
    (
        "NamespaceFinalizersRemaining",
        "ContentHasNoFinalizers",
        "All content-preserving finalizers finished",
    ),
];

/// What one pass over a terminating namespace left behind.
#[derive(Debug, Default)]
pub(crate) struct Remaining {
    /// Objects still there, by `<plural>.<group>` (the core group is empty: `configmaps.`).
    pub by_resource: BTreeMap<String, usize>,
    /// Objects still there, by each finalizer they carry.
    pub by_finalizer: BTreeMap<String, usize>,
    /// Deletes that failed.
    pub delete_errors: Vec<String>,
}

impl Remaining {
    /// Count one object still in the namespace.
    pub fn object(&mut self, resource: String, finalizers: &[String]) {
        *self.by_resource.entry(resource).or_default() += 1;
        for f in finalizers {
            *self.by_finalizer.entry(f.clone()).or_default() += 1;
        }
    }

    /// How many objects remain.
    pub fn total(&self) -> usize {
        self.by_resource.values().sum()
    }

    /// The failing conditions, by type.
    fn failures(&self) -> BTreeMap<&'static str, (&'static str, String)> {
        let mut out = BTreeMap::new();
        if !self.delete_errors.is_empty() {
            let message = format!(
                "Failed to delete all resource types, {} remaining: {}",
                self.delete_errors.len(),
                aggregate(&self.delete_errors)
            );
            out.insert(
                "NamespaceDeletionContentFailure",
                ("ContentDeletionFailed", message),
            );
        }
        let resources = listing(&self.by_resource, |r, n| {
            format!("{r} has {n} resource instances")
        });
        if !resources.is_empty() {
            let message = format!("Some resources are remaining: {resources}");
            out.insert(
                "NamespaceContentRemaining",
                ("SomeResourcesRemain", message),
            );
        }
        let finalizers = listing(&self.by_finalizer, |f, n| {
            format!("{f} in {n} resource instances")
        });
        if !finalizers.is_empty() {
            let message =
                format!("Some content in the namespace has finalizers remaining: {finalizers}");
            out.insert(
                "NamespaceFinalizersRemaining",
                ("SomeFinalizersRemain", message),
            );
        }
        out
    }
}

/// `fmt.Sprintf("%s …", …)` entries for every non-zero count, sorted as strings, joined.
fn listing(counts: &BTreeMap<String, usize>, entry: impl Fn(&str, usize) -> String) -> String {
    let mut entries: Vec<String> = counts
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, n)| entry(k, *n))
        .collect();
    entries.sort();
    entries.join(", ")
}

/// `utilerrors.NewAggregate(errs).Error()`: one error as itself, several in brackets.
fn aggregate(errors: &[String]) -> String {
    match errors {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// The namespace's conditions after this pass, or None when they would not change.
/// Conditions keep their place and time while their status and message stay the same;
/// conditions of other types are left alone.
pub(crate) fn update(old: &[Value], remaining: &Remaining, now: &str) -> Option<Vec<Value>> {
    let failures = remaining.failures();
    let mut conditions = old.to_vec();
    let mut changed = false;
    for (kind, ok_reason, ok_message) in TYPES {
        let (status, reason, message) = match failures.get(kind) {
            Some((reason, message)) => ("True", *reason, message.clone()),
            None => ("False", *ok_reason, ok_message.to_string()),
        };
        let condition = json!({
            "type": kind, "status": status, "lastTransitionTime": now,
            "reason": reason, "message": message,
        });
        match conditions.iter_mut().find(|c| c["type"] == *kind) {
            None => conditions.push(condition),
            Some(c) if c["status"] == status && c["message"] == message.as_str() => continue,
            Some(c) => *c = condition,
        }
        changed = true;
    }
    changed.then_some(conditions)
}

#[cfg(test)]
mod tests;
