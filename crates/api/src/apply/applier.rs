//! The apply operation.
//!
//! 1. Validate the configuration and decode the live managedFields; a live object nobody
//!    tracks yet is first given whole to `before-first-apply` (an `Update` manager), so an
//!    applier cannot silently overwrite what was there.
//! 2. Merge the configuration (minus the fields the scope resets) into the live object.
//! 3. Prune: what the applier owned last time, does not apply now, and nobody else owns is
//!    removed.
//! 4. Compare live and result: fields other managers own that the result changes are
//!    conflicts; with force they move to the applier. Removed fields leave every set.
//! 5. The applier now owns exactly what it applied; its time moves only if something moved.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::diff::{compare, to_field_set};
use super::fieldset::FieldSet;
use super::managed::{self, ManagedEntry, Operation};
use super::merge::merge;
use super::path::{values_equal, PathElement};
use super::prune::{remove_items, retain_items, strip_applied_nulls, with_named_fields};
use super::typed::{Ty, Types};
use super::{Applier, ApplyError, Conflict, Reset};

/// The manager that owns whatever an untracked object held before its first apply.
pub(crate) const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// Metadata no manager ever owns (`.metadata` itself only as a member; its fields stay).
const NEVER_OWNED: &[&str] = &[
    ".apiVersion",
    ".kind",
    ".metadata.name",
    ".metadata.namespace",
    ".metadata.uid",
    ".metadata.resourceVersion",
    ".metadata.generation",
    ".metadata.creationTimestamp",
    ".metadata.deletionTimestamp",
    ".metadata.selfLink",
    ".metadata.clusterName",
    ".metadata.managedFields",
];

// === impl Applier (helpers shared with the tracker) ===

impl Applier<'_> {
    pub(crate) fn types(&self) -> Types<'_> {
        Types {
            schema: self.schema,
            key_defaults: &self.key_defaults,
        }
    }

    pub(crate) fn root(&self) -> Ty {
        Ty::Struct(self.root_type.clone())
    }

    /// `set` restricted to what this scope may own.
    pub(crate) fn in_scope(&self, set: &FieldSet) -> FieldSet {
        match &self.scope.reset {
            Reset::Paths(reset) => set.recursive_difference(reset),
            Reset::AllExcept(keep) => set.restrict_to(keep),
        }
    }

    /// `set` as it may be stored: in scope, without the metadata nobody owns.
    pub(crate) fn ownable(&self, set: &FieldSet) -> FieldSet {
        // The list is constant and parses; an empty fallback would only own more, not fail.
        let leaves = FieldSet::from_paths(NEVER_OWNED.iter().copied()).unwrap_or_default();
        let mut metadata_itself = FieldSet::new();
        metadata_itself.insert(&[PathElement::Field("metadata".into())]);
        self.in_scope(set)
            .recursive_difference(&leaves)
            .difference(&metadata_itself)
            .normalized()
    }

    /// What of `applied` this scope may write: `applied` itself when the scope resets none
    /// of its top-level fields (the main resource's apply that leaves `.status` out), else a
    /// copy without what is reset.
    fn writable<'v>(&self, types: &Types<'_>, root: &Ty, applied: &'v Value) -> Cow<'v, Value> {
        match &self.scope.reset {
            Reset::Paths(reset) => {
                let touched = applied.as_object().is_some_and(|a| {
                    reset
                        .members
                        .iter()
                        .chain(reset.children.keys())
                        .any(|pe| match pe {
                            PathElement::Field(f) => a.contains_key(f),
                            _ => true,
                        })
                });
                if !touched {
                    return Cow::Borrowed(applied);
                }
                let mut config = applied.clone();
                remove_items(types, root, &mut config, reset);
                Cow::Owned(config)
            }
            Reset::AllExcept(keep) => {
                let mut config = applied.clone();
                retain_items(types, root, &mut config, keep);
                Cow::Owned(config)
            }
        }
    }

    pub(crate) fn subresource(&self) -> Option<&str> {
        self.scope.subresource.as_deref()
    }
}

fn type_meta<'v>(obj: &'v Value, what: &str) -> Result<(&'v str, &'v str), ApplyError> {
    let get = |field: &str| {
        obj.get(field)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| ApplyError::InvalidObject(format!("{what} must set {field}")))
    };
    Ok((get("apiVersion")?, get("kind")?))
}

// === impl Applier ===

impl Applier<'_> {
    /// Applies `applied` for `manager` over `live` (`None`: the object is created) and
    /// returns the new object with its managedFields. `now` is an RFC 3339 timestamp.
    pub fn apply(
        &self,
        live: Option<&Value>,
        applied: &Value,
        manager: &str,
        force: bool,
        now: &str,
    ) -> Result<Value, ApplyError> {
        let types = self.types();
        let root = self.root();
        let subresource = self.subresource();

        // 1. Validate; decode ownership.
        if !applied.is_object() {
            return Err(ApplyError::InvalidObject(
                "the apply configuration must be an object".into(),
            ));
        }
        let (api_version, kind) = type_meta(applied, "the apply configuration")?;
        if managed::raw(applied).is_some() {
            return Err(ApplyError::ManagedFieldsInApply);
        }
        let mut entries = match (live, subresource) {
            (Some(l), _) => {
                let (_, live_kind) = type_meta(l, "the live object")?;
                if live_kind != kind {
                    return Err(ApplyError::InvalidObject(format!(
                        "the apply configuration is a {kind}, the object a {live_kind}"
                    )));
                }
                managed::read(l)?
            }
            (None, Some(sub)) => return Err(ApplyError::SubresourceOfMissingObject(sub.into())),
            (None, None) => Vec::new(),
        };
        let mut base = live.cloned().unwrap_or_else(|| Value::Object(Map::new()));
        managed::remove(&mut base);
        if live.is_some() && entries.is_empty() {
            let everything = compare(&types, &root, &Value::Object(Map::new()), &base)?.changed();
            let fields = self.ownable(&everything);
            if !fields.is_empty() {
                entries.push(ManagedEntry {
                    manager: BEFORE_FIRST_APPLY.into(),
                    operation: Operation::Update,
                    subresource: subresource.map(String::from),
                    api_version: base["apiVersion"]
                        .as_str()
                        .unwrap_or(api_version)
                        .to_string(),
                    time: Some(now.to_string()),
                    fields,
                });
            }
        }

        // Entries whose fields do not change keep their `fieldsV1` as stored.
        let read = managed::as_read(live, &entries);
        let mut kept = managed::unchanged(read, &entries);

        // 2. Merge what this scope may write.
        let config = self.writable(&types, &root, applied);
        let config = config.as_ref();
        let applied_set = self.ownable(&to_field_set(&types, &root, config)?);
        let mut result = merge(&types, &root, Some(&base), config)?;

        // 3. Prune what the applier gave up and nobody else holds.
        let mine = entries
            .iter()
            .position(|e| e.is(manager, Operation::Apply, subresource));
        let previous = mine.map(|i| entries[i].fields.clone()).unwrap_or_default();
        let held = entries
            .iter()
            .enumerate()
            .filter(|(i, _)| Some(*i) != mine)
            .fold(applied_set.clone(), |acc, (_, e)| acc.union(&e.fields));
        let give_up = with_named_fields(&types, &root, &previous)
            .difference(&with_named_fields(&types, &root, &held));
        remove_items(&types, &root, &mut result, &give_up);

        // 4. Conflicts, forced transfers, removals.
        let diff = compare(&types, &root, &base, &result)?;
        let changed = self.in_scope(&diff.changed());
        let mut taken: Vec<(usize, FieldSet)> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if Some(i) == mine {
                continue;
            }
            let lost = e.fields.intersection(&changed);
            if !lost.is_empty() {
                taken.push((i, lost));
            }
        }
        if !force && !taken.is_empty() {
            return Err(ApplyError::Conflicts(conflicts(&entries, &taken)));
        }
        for (i, lost) in &taken {
            entries[*i].fields = entries[*i].fields.difference(lost);
            kept[*i] = false;
        }

        // 5. The applier's entry.
        strip_applied_nulls(&types, &root, &mut result, config);
        let object_changed = live.is_none() || !values_equal(&base, &result);
        match mine {
            Some(i) => {
                let e = &mut entries[i];
                if object_changed || e.fields.clone().normalized() != applied_set {
                    e.time = Some(now.to_string());
                }
                kept[i] &= e.fields == applied_set;
                e.fields = applied_set;
                e.api_version = api_version.to_string();
            }
            None => entries.push(ManagedEntry {
                manager: manager.to_string(),
                operation: Operation::Apply,
                subresource: subresource.map(String::from),
                api_version: api_version.to_string(),
                time: Some(now.to_string()),
                fields: applied_set,
            }),
        }
        for (e, kept) in entries.iter_mut().zip(kept.iter_mut()) {
            if e.fields.meets(&diff.removed) {
                e.fields = e.fields.difference(&diff.removed);
                *kept = false;
            }
        }
        managed::write_unchanged(&mut result, &entries, read, &kept);
        Ok(result)
    }
}

/// The conflicts, grouped by manager (sorted) and in path order within a manager.
fn conflicts(entries: &[ManagedEntry], taken: &[(usize, FieldSet)]) -> Vec<Conflict> {
    let mut order: Vec<&(usize, FieldSet)> = taken.iter().collect();
    order.sort_by(|a, b| {
        let (p, q) = (&entries[a.0], &entries[b.0]);
        (&p.manager, p.operation, &p.subresource).cmp(&(&q.manager, q.operation, &q.subresource))
    });
    let mut out = Vec::new();
    for (i, lost) in order {
        let e = &entries[*i];
        for path in lost.paths() {
            out.push(Conflict {
                manager: e.manager.clone(),
                field: path.to_string(),
                operation: e.operation,
                subresource: e.subresource.clone(),
                api_version: e.api_version.clone(),
            });
        }
    }
    out
}
