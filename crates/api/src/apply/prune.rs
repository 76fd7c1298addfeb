//! Cutting values down by field sets: removing what an applier gave up, keeping only what a
//! subresource may touch, and the schema-aware completion of sets used for pruning.

use serde_json::Value;

use super::fieldset::FieldSet;
use super::path::PathElement;
use super::typed::{Ty, Types, Walk};

/// Removes from `value` every member of `set`, with everything below it.
pub(crate) fn remove_items(types: &Types<'_>, ty: &Ty, value: &mut Value, set: &FieldSet) {
    cut(types, ty, value, set, false);
}

/// Keeps in `value` only the members of `set` (whole) and the path leading to them.
pub(crate) fn retain_items(types: &Types<'_>, ty: &Ty, value: &mut Value, set: &FieldSet) {
    cut(types, ty, value, set, true);
}

/// Shared walk of [`remove_items`] and [`retain_items`]: at each node, a member is dropped
/// (or kept whole), a child set is descended into, anything else is kept (or dropped).
fn cut(types: &Types<'_>, ty: &Ty, value: &mut Value, set: &FieldSet, retain: bool) {
    match types.walk(ty, value) {
        Walk::Fields => {
            let oty = types.as_object(ty);
            let Value::Object(obj) = value else { return };
            let keys: Vec<String> = obj.keys().cloned().collect();
            for key in keys {
                let pe = PathElement::Field(key.clone());
                if set.members.contains(&pe) {
                    if !retain {
                        obj.shift_remove(&key);
                    }
                } else if let Some(child) = set.child(&pe) {
                    if let Some(v) = obj.get_mut(&key) {
                        cut(types, &types.field(&oty, &key).0, v, child, retain);
                    }
                } else if retain {
                    obj.shift_remove(&key);
                }
            }
        }
        Walk::Items => {
            let ity = types.item(ty);
            let Value::Array(items) = value else { return };
            let old = std::mem::take(items);
            for mut item in old {
                // An item without a usable key cannot be addressed by any set: keep it as is.
                let Ok(pe) = types.item_element(ty, &item) else {
                    items.push(item);
                    continue;
                };
                if set.members.contains(&pe) {
                    if retain {
                        items.push(item);
                    }
                } else if let Some(child) = set.child(&pe) {
                    cut(types, &ity, &mut item, child, retain);
                    items.push(item);
                } else if !retain {
                    items.push(item);
                }
            }
        }
        Walk::Leaf => {}
    }
}

/// `set` with every declared struct field that has owned children made a member too, so
/// that pruning can tell "a field under this struct is still owned" from "nobody owns
/// anything here any more".
pub(crate) fn with_named_fields(types: &Types<'_>, ty: &Ty, set: &FieldSet) -> FieldSet {
    let mut out = FieldSet {
        members: set.members.clone(),
        children: Default::default(),
    };
    for (pe, child) in &set.children {
        let cty = types.child(ty, pe);
        if let (PathElement::Field(name), Ty::Struct(_)) = (pe, ty) {
            if types.field(ty, name).1 && !child.is_empty() {
                out.members.insert(pe.clone());
            }
        }
        out.children
            .insert(pe.clone(), with_named_fields(types, &cty, child));
    }
    out
}

/// Removes from `result` the keys the applied configuration set to `null`: `null` means
/// "owned, and unset", and the stored object must not keep the explicit nulls.
pub(crate) fn strip_applied_nulls(types: &Types<'_>, ty: &Ty, result: &mut Value, applied: &Value) {
    match (types.walk(ty, applied), applied, result) {
        (Walk::Fields, Value::Object(a), Value::Object(r)) => {
            let oty = types.as_object(ty);
            for (key, av) in a {
                if av.is_null() {
                    r.shift_remove(key);
                } else if let Some(rv) = r.get_mut(key) {
                    strip_applied_nulls(types, &types.field(&oty, key).0, rv, av);
                }
            }
        }
        (Walk::Items, Value::Array(a), Value::Array(r)) => {
            let ity = types.item(ty);
            for av in a.iter().filter(|v| v.is_object()) {
                let Ok(pe) = types.item_element(ty, av) else {
                    continue;
                };
                let found = r
                    .iter_mut()
                    .find(|rv| types.item_element(ty, rv).is_ok_and(|p| p == pe));
                if let Some(rv) = found {
                    strip_applied_nulls(types, &ity, rv, av);
                }
            }
        }
        _ => {}
    }
}
