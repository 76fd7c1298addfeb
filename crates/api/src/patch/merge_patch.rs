//! RFC 7386 JSON merge patch.
//!
//! An object patch is merged member by member into the target (`null` removes a member, a
//! nested object recurses, anything else replaces); any other patch value replaces the target
//! whole. Lists are never merged: a list in the patch replaces the list in the target.
//! Kubernetes objects are always objects, so [`merge_patch`] insists on an object at the top;
//! below it, RFC 7386 applies exactly.

use serde_json::{Map, Value};

use super::{kind_of, PatchError, Result};

/// Apply an RFC 7386 merge patch to `doc` and return the result; `doc` is not modified.
///
/// The patch must be a JSON object (a Kubernetes object is patched member by member);
/// anything else is [`PatchError::Malformed`].
pub fn merge_patch(doc: &Value, patch: &Value) -> Result<Value> {
    if !patch.is_object() {
        return Err(PatchError::Malformed(format!(
            "a merge patch must be a JSON object, got {}",
            kind_of(patch)
        )));
    }
    Ok(apply(Some(doc), patch))
}

/// RFC 7386 `MergePatch(Target, Patch)`; `target` is `None` where the member is absent.
pub(super) fn apply(target: Option<&Value>, patch: &Value) -> Value {
    let Value::Object(members) = patch else {
        return patch.clone();
    };
    let mut out = match target {
        Some(Value::Object(target)) => target.clone(),
        _ => Map::new(),
    };
    for (name, value) in members {
        if value.is_null() {
            // shift_remove: the remaining members keep their order.
            out.shift_remove(name);
        } else {
            let merged = apply(out.get(name), value);
            out.insert(name.clone(), merged);
        }
    }
    Value::Object(out)
}
