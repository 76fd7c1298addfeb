//! Kubernetes strategic merge patch (SMP).
//!
//! SMP is a JSON merge patch that knows, from the schema, how each list is merged:
//!
//! - Objects merge key by key, recursively; `null` deletes a key; scalars replace.
//! - A list whose field has patch strategy `merge` and a merge key (containers by `name`) is
//!   merged element by element; a `merge` list of scalars (finalizers) is merged as a set. Any
//!   other list is replaced whole, and so is any list the schema doesn't know.
//! - Directives steer the merge: `$patch` (`replace`/`delete`, on objects and list elements),
//!   `$retainKeys`, `$setElementOrder/<field>` and `$deleteFromPrimitiveList/<field>`. They are
//!   consumed here and never appear in the result; an unknown `$` key is a malformed patch.
//!
//! Where the patch brings a value the document doesn't have, it is merged into nothing, so
//! nulls and directives inside it are resolved rather than stored. Lists live in [`list`].

mod list;

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{brief, kind_of, pointer_child, show_pointer, PatchError, Result};
use crate::schema::lookup::{FieldInfo, FieldShape, PatchStrategy, SchemaLookup};

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Apply a strategic merge patch to `doc`, an object of type `root_type` in `schema`.
///
/// `doc` is not modified. A patch that is not an object, uses an unknown directive, or breaks a
/// directive's rules is [`PatchError::Malformed`]; the message names the JSON pointer (in the
/// patch) of the offending place.
pub fn strategic_merge_patch(
    doc: &Value,
    patch: &Value,
    schema: &dyn SchemaLookup,
    root_type: &str,
) -> Result<Value> {
    let Value::Object(members) = patch else {
        return Err(PatchError::Malformed(format!(
            "a strategic merge patch must be a JSON object, got {}",
            kind_of(patch)
        )));
    };
    let root = FieldInfo {
        type_name: Some(root_type.to_string()),
        ..FieldInfo::plain(FieldShape::Object)
    };
    let merger = Merger { schema };
    match merger.object(doc.as_object(), members, Some(&root), "")? {
        Some(merged) => Ok(Value::Object(merged)),
        None => Err(malformed(
            "",
            "`$patch: delete` would delete the whole object; send a DELETE request instead",
        )),
    }
}

fn malformed(at: &str, why: impl std::fmt::Display) -> PatchError {
    PatchError::Malformed(format!(
        "strategic merge patch, at {}: {why}",
        show_pointer(at)
    ))
}

/// What happens to one member of an object.
enum Outcome {
    /// Leave the document's value as it is.
    Keep,
    /// Store this value.
    Set(Value),
    /// Remove the member.
    Remove,
}

/// Everything the patch says about one field: its value and the list directives naming it.
#[derive(Default)]
struct FieldPatch<'p> {
    value: Option<&'p Value>,
    order: Option<&'p Value>,
    delete: Option<&'p Value>,
}

struct Merger<'s> {
    schema: &'s dyn SchemaLookup,
}

impl Merger<'_> {
    /// Merge `patch` into `orig` (`None`: merge into nothing). `slot` describes the value.
    /// Returns `None` when the patch deletes the value (`$patch: delete`).
    fn object(
        &self,
        orig: Option<&Map<String, Value>>,
        patch: &Map<String, Value>,
        slot: Option<&FieldInfo>,
        at: &str,
    ) -> Result<Option<Map<String, Value>>> {
        let mut orig = orig;
        match patch.get(PATCH) {
            None => {}
            Some(Value::String(d)) if d == "delete" => return Ok(None),
            Some(Value::String(d)) if d == "replace" => orig = None,
            Some(Value::String(d)) if d == "merge" => {}
            Some(other) => {
                return Err(malformed(
                    &pointer_child(at, PATCH),
                    format!(
                        "unknown `$patch` value {}; on an object use \"replace\" or \"delete\"",
                        brief(other)
                    ),
                ))
            }
        }
        let mut out = orig.cloned().unwrap_or_default();
        if let Some(keep) = patch.get(RETAIN_KEYS) {
            retain_keys(&mut out, keep, patch, at)?;
        }
        for (name, field) in self.fields(patch, slot, at)? {
            let child = self.child_slot(slot, name);
            let at = pointer_child(at, name);
            match self.field(out.get(name), &field, child.as_deref(), &at)? {
                Outcome::Keep => {}
                // insert keeps an existing key in its place and appends a new one.
                Outcome::Set(value) => {
                    out.insert(name.to_string(), value);
                }
                Outcome::Remove => {
                    out.shift_remove(name);
                }
            }
        }
        Ok(Some(out))
    }

    /// Group the patch's keys by the field they are about, in order of first mention.
    fn fields<'p>(
        &self,
        patch: &'p Map<String, Value>,
        slot: Option<&FieldInfo>,
        at: &str,
    ) -> Result<Vec<(&'p str, FieldPatch<'p>)>> {
        let mut fields: Vec<(&'p str, FieldPatch<'p>)> = Vec::new();
        for (key, value) in patch {
            if key == PATCH || key == RETAIN_KEYS {
                continue;
            }
            if let Some(name) = key.strip_prefix(SET_ELEMENT_ORDER) {
                entry(&mut fields, named(name, key, at)?).order = Some(value);
            } else if let Some(name) = key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
                entry(&mut fields, named(name, key, at)?).delete = Some(value);
            } else if key.starts_with('$') && !self.is_data_key(slot, key) {
                return Err(malformed(
                    &pointer_child(at, key),
                    format!(
                        "unknown directive `{key}`; strategic merge patch knows `$patch`, \
                         `$retainKeys`, `$setElementOrder/<field>` and \
                         `$deleteFromPrimitiveList/<field>`"
                    ),
                ));
            } else {
                entry(&mut fields, key).value = Some(value);
            }
        }
        Ok(fields)
    }

    /// A `$`-prefixed key is data, not a directive, where keys are arbitrary (a map) or where
    /// the schema declares such a field (JSON schema's `$ref` in a CRD).
    fn is_data_key(&self, slot: Option<&FieldInfo>, key: &str) -> bool {
        slot.is_some_and(|s| s.shape == FieldShape::Map) || self.child_slot(slot, key).is_some()
    }

    /// Merge what the patch says about one field into the document's value of it.
    fn field(
        &self,
        orig: Option<&Value>,
        field: &FieldPatch<'_>,
        slot: Option<&FieldInfo>,
        at: &str,
    ) -> Result<Outcome> {
        let list_directives = field.order.is_some() || field.delete.is_some();
        match field.value {
            Some(Value::Null) => Ok(Outcome::Remove),
            Some(Value::Array(items)) => self.list_field(orig, Some(items), field, slot, at),
            Some(value) if !list_directives => Ok(match self.value(orig, value, slot, at)? {
                Some(value) => Outcome::Set(value),
                None => Outcome::Remove,
            }),
            Some(value) => Err(malformed(
                at,
                format!(
                    "is {}, but `$setElementOrder` or `$deleteFromPrimitiveList` \
                     for it needs a list",
                    kind_of(value)
                ),
            )),
            None => self.list_field(orig, None, field, slot, at),
        }
    }

    /// Merge one patch value (not a field-level list) into `orig`; `None` deletes it.
    fn value(
        &self,
        orig: Option<&Value>,
        patch: &Value,
        slot: Option<&FieldInfo>,
        at: &str,
    ) -> Result<Option<Value>> {
        Ok(match patch {
            Value::Null => None,
            Value::Object(members) => {
                let orig = if has(slot, PatchStrategy::Replace) {
                    None
                } else {
                    orig.and_then(Value::as_object)
                };
                self.object(orig, members, slot, at)?.map(Value::Object)
            }
            Value::Array(items) => Some(Value::Array(self.replaced_list(items, slot, at)?)),
            scalar => Some(scalar.clone()),
        })
    }

    /// How to treat field `name` of a value described by `slot`.
    fn child_slot(&self, slot: Option<&FieldInfo>, name: &str) -> Option<Arc<FieldInfo>> {
        let slot = slot?;
        match slot.shape {
            FieldShape::Map => inner(slot).map(Arc::new),
            _ => self.schema.field(slot.type_name.as_deref()?, name),
        }
    }
}

/// The entry for field `name`, added at the end if it is new.
fn entry<'f, 'p>(
    fields: &'f mut Vec<(&'p str, FieldPatch<'p>)>,
    name: &'p str,
) -> &'f mut FieldPatch<'p> {
    let i = match fields.iter().position(|(n, _)| *n == name) {
        Some(i) => i,
        None => {
            fields.push((name, FieldPatch::default()));
            fields.len() - 1
        }
    };
    &mut fields[i].1
}

fn named<'p>(name: &'p str, key: &str, at: &str) -> Result<&'p str> {
    if name.is_empty() {
        return Err(malformed(
            &pointer_child(at, key),
            format!("`{key}` names no field"),
        ));
    }
    Ok(name)
}

/// Does the field have this patch strategy?
fn has(slot: Option<&FieldInfo>, strategy: PatchStrategy) -> bool {
    slot.is_some_and(|s| s.patch_strategy.contains(&strategy))
}

/// How to treat the elements of a list, or the values of a map, described by `slot`.
fn inner(slot: &FieldInfo) -> Option<FieldInfo> {
    if slot.type_name.is_none() && slot.item_shape.is_none() {
        return None;
    }
    let shape = slot.item_shape.unwrap_or(FieldShape::Unknown);
    Some(FieldInfo {
        type_name: slot.type_name.clone(),
        ..FieldInfo::plain(shape)
    })
}

/// `$retainKeys`: clear every key of `out` the list doesn't name. The patch may only set keys it
/// names, or the result would hold a key the client asked to drop.
fn retain_keys(
    out: &mut Map<String, Value>,
    keep: &Value,
    patch: &Map<String, Value>,
    at: &str,
) -> Result<()> {
    let here = pointer_child(at, RETAIN_KEYS);
    let Some(keep) = keep.as_array() else {
        return Err(malformed(
            &here,
            format!("must be a list of field names, got {}", kind_of(keep)),
        ));
    };
    let mut names = Vec::with_capacity(keep.len());
    for name in keep {
        match name.as_str() {
            Some(name) => names.push(name),
            None => {
                return Err(malformed(
                    &here,
                    format!("must list field names, but has {}", brief(name)),
                ))
            }
        }
    }
    let unlisted = patch
        .iter()
        .find(|(k, v)| !k.starts_with('$') && !v.is_null() && !names.contains(&k.as_str()));
    if let Some((key, _)) = unlisted {
        return Err(malformed(
            &here,
            format!(
                "does not list `{key}`, which the patch sets; it must list every field to keep"
            ),
        ));
    }
    out.retain(|k, _| names.contains(&k.as_str()));
    Ok(())
}
