//! From values to field sets: which fields an object sets, and which fields changed between
//! two versions of an object.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::fieldset::FieldSet;
use super::path::{values_equal, PathElement};
use super::typed::{Ty, Types, Walk};
use super::ApplyError;

/// The fields an applied configuration sets, the way Kubernetes counts them: every leaf and
/// atomic value, every list item, every undeclared map key (map entries and untyped objects),
/// and declared fields only when they hold `null` or `{}` — a declared struct with content is
/// owned through its content.
pub(crate) fn to_field_set(
    types: &Types<'_>,
    ty: &Ty,
    value: &Value,
) -> Result<FieldSet, ApplyError> {
    let mut node = FieldSet::new();
    fill(types, ty, value, &mut node)?;
    Ok(node)
}

fn fill(types: &Types<'_>, ty: &Ty, value: &Value, node: &mut FieldSet) -> Result<(), ApplyError> {
    match (types.walk(ty, value), value) {
        (Walk::Fields, Value::Object(obj)) => {
            let oty = types.as_object(ty);
            for (key, v) in obj {
                let (cty, declared) = types.field(&oty, key);
                let pe = PathElement::Field(key.clone());
                let mut child = FieldSet::new();
                fill(types, &cty, v, &mut child)?;
                let leaf = matches!(types.walk(&cty, v), Walk::Leaf);
                let empty_object = v.as_object().is_some_and(|m| m.is_empty());
                if leaf || empty_object || !declared {
                    node.members.insert(pe.clone());
                }
                if !child.is_empty() {
                    node.children.insert(pe, child);
                }
            }
        }
        (Walk::Items, Value::Array(items)) => {
            let ity = types.item(ty);
            let mut seen = BTreeSet::new();
            for item in items {
                let pe = types.item_element(ty, item)?;
                if !seen.insert(pe.clone()) {
                    return Err(ApplyError::DuplicateKey {
                        key: pe.to_string(),
                    });
                }
                let mut child = FieldSet::new();
                fill(types, &ity, item, &mut child)?;
                node.members.insert(pe.clone());
                if !child.is_empty() {
                    node.children.insert(pe, child);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The difference between two versions of an object.
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    /// Present only in the new version (with everything below them).
    pub(crate) added: FieldSet,
    /// Present in both with different values (leaves and atomic values only).
    pub(crate) modified: FieldSet,
    /// Present only in the old version (with everything below them).
    pub(crate) removed: FieldSet,
}

impl Comparison {
    /// Fields whose value the new version sets: added or modified.
    pub(crate) fn changed(&self) -> FieldSet {
        self.added.union(&self.modified)
    }
}

/// Compares `old` and `new` of type `ty`.
pub(crate) fn compare(
    types: &Types<'_>,
    ty: &Ty,
    old: &Value,
    new: &Value,
) -> Result<Comparison, ApplyError> {
    let mut out = Comparison::default();
    compare_at(types, ty, Some(old), Some(new), &mut Vec::new(), &mut out)?;
    Ok(out)
}

/// [`compare`] of a stored object with its new version, the stored `metadata.managedFields`
/// left out (the new version's are taken off for tracking) without copying the stored object.
pub(crate) fn compare_stored(
    types: &Types<'_>,
    ty: &Ty,
    old: &Value,
    new: &Value,
) -> Result<Comparison, ApplyError> {
    let meta = old.get("metadata").and_then(Value::as_object);
    let (Some(meta), Some(o), Some(n)) = (meta, old.as_object(), new.as_object()) else {
        return compare(types, ty, old, new);
    };
    if !meta.contains_key("managedFields") || !matches!(types.walk(ty, old), Walk::Fields) {
        return compare(types, ty, old, new);
    }
    let meta = Value::Object(
        meta.iter()
            .filter(|(k, _)| *k != "managedFields")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    );
    let fields = o
        .iter()
        .map(|(k, v)| (k, if k == "metadata" { &meta } else { v }));
    let mut out = Comparison::default();
    compare_fields(types, ty, fields, o, n, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn compare_at(
    types: &Types<'_>,
    ty: &Ty,
    old: Option<&Value>,
    new: Option<&Value>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) -> Result<(), ApplyError> {
    let (old, new) = match (old, new) {
        (None, None) => return Ok(()),
        (None, Some(n)) => return every_node(types, ty, n, path, &mut out.added),
        (Some(o), None) => return every_node(types, ty, o, path, &mut out.removed),
        // Nothing below two equal values was added, changed or removed (a status write leaves
        // the spec as it was, and walking it field by field was most of the comparison).
        (Some(o), Some(n)) if o == n => return Ok(()),
        (Some(o), Some(n)) => (o, n),
    };
    match (types.walk(ty, old), types.walk(ty, new), old, new) {
        (Walk::Fields, Walk::Fields, Value::Object(o), Value::Object(n)) => {
            compare_fields(types, ty, o.iter(), o, n, path, out)?;
        }
        (Walk::Items, Walk::Items, Value::Array(o), Value::Array(n)) => {
            let ity = types.item(ty);
            let olds = index_items(types, ty, o)?;
            let news = index_items(types, ty, n)?;
            let by_new: BTreeMap<&PathElement, &Value> =
                news.iter().map(|(p, v)| (p, *v)).collect();
            let old_keys: BTreeSet<&PathElement> = olds.iter().map(|(p, _)| p).collect();
            for (pe, ov) in &olds {
                let nv = by_new.get(pe).copied();
                path.push(pe.clone());
                compare_at(types, &ity, Some(ov), nv, path, out)?;
                path.pop();
            }
            for (pe, nv) in news.iter().filter(|(p, _)| !old_keys.contains(p)) {
                path.push(pe.clone());
                compare_at(types, &ity, None, Some(nv), path, out)?;
                path.pop();
            }
        }
        _ => {
            if !values_equal(old, new) {
                out.modified.insert(path);
            }
        }
    }
    Ok(())
}

/// The fields of an object of type `ty`: `old`'s (the old map's, or a view of them), then
/// those only `new` has.
fn compare_fields<'v>(
    types: &Types<'_>,
    ty: &Ty,
    old: impl Iterator<Item = (&'v String, &'v Value)>,
    old_map: &serde_json::Map<String, Value>,
    new: &serde_json::Map<String, Value>,
    path: &mut Vec<PathElement>,
    out: &mut Comparison,
) -> Result<(), ApplyError> {
    let oty = types.as_object(ty);
    for (key, ov) in old {
        let cty = types.field(&oty, key).0;
        path.push(PathElement::Field(key.clone()));
        compare_at(types, &cty, Some(ov), new.get(key), path, out)?;
        path.pop();
    }
    for (key, nv) in new.iter().filter(|(k, _)| !old_map.contains_key(*k)) {
        let cty = types.field(&oty, key).0;
        path.push(PathElement::Field(key.clone()));
        compare_at(types, &cty, None, Some(nv), path, out)?;
        path.pop();
    }
    Ok(())
}

/// List items by element, first occurrence only (a live object may hold duplicates that
/// predate validation; later copies are left out of ownership).
pub(crate) fn index_items<'v>(
    types: &Types<'_>,
    ty: &Ty,
    items: &'v [Value],
) -> Result<Vec<(PathElement, &'v Value)>, ApplyError> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let pe = types.item_element(ty, item)?;
        if seen.insert(pe.clone()) {
            out.push((pe, item));
        }
    }
    Ok(out)
}

/// Inserts the node at `path` and every node below it.
fn every_node(
    types: &Types<'_>,
    ty: &Ty,
    value: &Value,
    path: &mut Vec<PathElement>,
    set: &mut FieldSet,
) -> Result<(), ApplyError> {
    set.insert(path);
    match (types.walk(ty, value), value) {
        (Walk::Fields, Value::Object(obj)) => {
            let oty = types.as_object(ty);
            for (key, v) in obj {
                let cty = types.field(&oty, key).0;
                path.push(PathElement::Field(key.clone()));
                every_node(types, &cty, v, path, set)?;
                path.pop();
            }
        }
        (Walk::Items, Value::Array(items)) => {
            let ity = types.item(ty);
            for (pe, item) in index_items(types, ty, items)? {
                path.push(pe);
                every_node(types, &ity, item, path, set)?;
                path.pop();
            }
        }
        _ => {}
    }
    Ok(())
}
