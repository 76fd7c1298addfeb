//! Lists in a strategic merge patch.
//!
//! A list whose field has patch strategy `merge` is merged: by merge key for lists of objects
//! (`{"$patch": "delete", key: v}` removes an element, `{"$patch": "replace"}` makes the rest of
//! the patch list the whole list), as a set for lists of scalars. Other lists are replaced.
//! `$deleteFromPrimitiveList/<field>` removes values from any list.
//!
//! Order follows apimachinery, so a list reads the same whichever server patched it: the
//! elements the patch names come in the patch's order — or `$setElementOrder/<field>`'s, when
//! given — and the document's other elements keep their relative order, each placed before the
//! first named element that followed it in the document. A new element therefore comes before
//! the document's trailing elements; `kubectl apply` sends `$setElementOrder` to say exactly.

use serde_json::{Map, Value};

use super::{
    brief, has, inner, kind_of, malformed, pointer_child, FieldPatch, Merger, Outcome, PATCH,
};
use crate::patch::{json_eq, Result};
use crate::schema::lookup::{FieldInfo, PatchStrategy};

/// One element of a list being merged.
struct Item {
    value: Value,
    /// Position in the document's list (after `$patch: delete`s), `None` for new elements.
    live: Option<usize>,
    /// What identifies it: the merge key's value, or the scalar itself.
    ident: Option<Value>,
}

impl Merger<'_> {
    /// A field whose patch value is a list, or which list directives name.
    pub(super) fn list_field(
        &self,
        orig: Option<&Value>,
        patch: Option<&Vec<Value>>,
        field: &FieldPatch<'_>,
        slot: Option<&FieldInfo>,
        at: &str,
    ) -> Result<Outcome> {
        let orig = orig.and_then(Value::as_array);
        let merging = has(slot, PatchStrategy::Merge);
        // `$setElementOrder` on a list that is replaced whole says nothing the list doesn't.
        let order = field.order.filter(|_| merging);
        let mut result = match (patch, orig) {
            (Some(items), _) if merging => {
                Some(self.merge_list(orig.map_or(&[], Vec::as_slice), items, order, slot, at)?)
            }
            (Some(items), _) => Some(self.replaced_list(items, slot, at)?),
            (None, Some(orig)) if order.is_some() => {
                Some(self.merge_list(orig, &[], order, slot, at)?)
            }
            (None, _) => None,
        };
        if let Some(delete) = field.delete {
            let Some(delete) = delete.as_array() else {
                let here = sibling(at, "$deleteFromPrimitiveList~1");
                return Err(malformed(
                    &here,
                    format!(
                        "must be a list of values to delete, got {}",
                        kind_of(delete)
                    ),
                ));
            };
            if let Some(list) = result.take().or_else(|| orig.cloned()) {
                result = Some(
                    list.into_iter()
                        .filter(|v| !delete.iter().any(|d| json_eq(d, v)))
                        .collect(),
                );
            }
        }
        Ok(result.map_or(Outcome::Keep, |list| Outcome::Set(Value::Array(list))))
    }

    /// A list replaced whole: its elements are merged into nothing, so nulls and directives
    /// inside them don't reach the result. Element markers (`{"$patch": "replace"}`, or
    /// `{"$patch": "delete", ...}`) agree with replacing the list and are dropped.
    pub(super) fn replaced_list(
        &self,
        items: &[Value],
        slot: Option<&FieldInfo>,
        at: &str,
    ) -> Result<Vec<Value>> {
        let element = slot.and_then(inner);
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = pointer_child(at, &i.to_string());
            match item {
                Value::Object(members) => match members.get(PATCH).and_then(Value::as_str) {
                    Some("replace" | "delete") => {}
                    _ => out.extend(
                        self.object(None, members, element.as_ref(), &at)?
                            .map(Value::Object),
                    ),
                },
                Value::Array(nested) => {
                    out.push(Value::Array(self.replaced_list(nested, None, &at)?))
                }
                scalar => out.push(scalar.clone()),
            }
        }
        Ok(out)
    }

    fn merge_list(
        &self,
        orig: &[Value],
        patch: &[Value],
        order: Option<&Value>,
        slot: Option<&FieldInfo>,
        at: &str,
    ) -> Result<Vec<Value>> {
        match slot.and_then(|s| s.patch_merge_key.as_deref()) {
            Some(key) => self.merge_by_key(orig, patch, order, key, slot, at),
            None => merge_scalars(orig, patch, order, at),
        }
    }

    fn merge_by_key(
        &self,
        orig: &[Value],
        patch: &[Value],
        order: Option<&Value>,
        key: &str,
        slot: Option<&FieldInfo>,
        at: &str,
    ) -> Result<Vec<Value>> {
        let element = slot.and_then(inner);
        let ident = |v: &Value| v.get(key).cloned();
        let mut items: Vec<Item> = orig
            .iter()
            .map(|v| Item {
                value: v.clone(),
                live: None,
                ident: ident(v),
            })
            .collect();
        let mut replace = false;
        let mut named: Vec<(String, &Map<String, Value>)> = Vec::new();
        for (i, element) in patch.iter().enumerate() {
            let at = pointer_child(at, &i.to_string());
            let Value::Object(members) = element else {
                let why = format!(
                    "is {}, but elements of a list merged by `{key}` must be objects",
                    kind_of(element)
                );
                return Err(malformed(&at, why));
            };
            match members.get(PATCH) {
                None => named.push((at, members)),
                Some(d) if d == "delete" => {
                    let Some(gone) = members.get(key) else {
                        return Err(malformed(
                            &at,
                            format!(
                                "`$patch: delete` needs the merge key `{key}` to say which element"
                            ),
                        ));
                    };
                    items.retain(|item| !item.ident.as_ref().is_some_and(|v| json_eq(v, gone)));
                }
                Some(d) if d == "replace" => replace = true,
                Some(d) if d == "merge" => {
                    return Err(malformed(
                        &at,
                        "`$patch: merge` is not supported in a list; merging is the default",
                    ))
                }
                Some(other) => {
                    let why = format!(
                        "unknown `$patch` value {}; in a list use \"delete\" or \"replace\"",
                        brief(other)
                    );
                    return Err(malformed(&at, why));
                }
            }
        }
        let mut wanted = Vec::with_capacity(named.len());
        for (at, members) in &named {
            let Some(id) = members.get(key) else {
                return Err(malformed(
                    at,
                    format!("has no merge key `{key}`; every element of this list must name it"),
                ));
            };
            wanted.push(id.clone());
        }
        if replace {
            items.clear();
        }
        for (item, live) in items.iter_mut().zip(0..) {
            item.live = Some(live);
        }
        for ((at, members), id) in named.iter().zip(&wanted) {
            let found = items
                .iter_mut()
                .find(|item| item.ident.as_ref().is_some_and(|v| json_eq(v, id)));
            match found {
                Some(item) => {
                    if let Some(merged) =
                        self.object(item.value.as_object(), members, element.as_ref(), at)?
                    {
                        item.value = Value::Object(merged);
                    }
                }
                None => {
                    let value = self
                        .object(None, members, element.as_ref(), at)?
                        .map(Value::Object);
                    let value = value.unwrap_or_default();
                    items.push(Item {
                        value,
                        live: None,
                        ident: Some(id.clone()),
                    });
                }
            }
        }
        let order = match order {
            Some(order) => Some(order_by_key(order, key, &wanted, at)?),
            None if replace => None,
            None => Some(wanted),
        };
        Ok(match order {
            Some(order) => arrange(items, &order),
            None => items.into_iter().map(|item| item.value).collect(),
        })
    }
}

/// A `merge` list of scalars: a set union keeping the first of duplicates.
fn merge_scalars(
    orig: &[Value],
    patch: &[Value],
    order: Option<&Value>,
    at: &str,
) -> Result<Vec<Value>> {
    let mut items: Vec<Item> = Vec::with_capacity(orig.len() + patch.len());
    for (i, value) in orig.iter().chain(patch).enumerate() {
        if let Some(i) = i.checked_sub(orig.len()) {
            if value.is_object() || value.is_array() {
                let why = format!(
                    "is {}, but this list holds scalars (it is merged as a set)",
                    kind_of(value)
                );
                return Err(malformed(&pointer_child(at, &i.to_string()), why));
            }
        }
        if !items
            .iter()
            .any(|item| item.ident.as_ref().is_some_and(|v| json_eq(v, value)))
        {
            let live = (i < orig.len()).then_some(items.len());
            items.push(Item {
                value: value.clone(),
                live,
                ident: Some(value.clone()),
            });
        }
    }
    let order = match order {
        Some(order) => {
            let here = sibling(at, "$setElementOrder~1");
            let order = order.as_array().ok_or_else(|| {
                malformed(&here, format!("must be a list, got {}", kind_of(order)))
            })?;
            check_order(patch, order, &here, at)?;
            order.clone()
        }
        None => patch.to_vec(),
    };
    Ok(arrange(items, &order))
}

/// The identities `$setElementOrder` lists for a list merged by `key`.
fn order_by_key(order: &Value, key: &str, wanted: &[Value], at: &str) -> Result<Vec<Value>> {
    let here = sibling(at, "$setElementOrder~1");
    let Some(entries) = order.as_array() else {
        return Err(malformed(
            &here,
            format!("must be a list, got {}", kind_of(order)),
        ));
    };
    let mut idents = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        match entry.get(key) {
            Some(id) if entry.is_object() => idents.push(id.clone()),
            _ => {
                let why = format!(
                    "must be an object naming the merge key `{key}`, got {}",
                    brief(entry)
                );
                return Err(malformed(&pointer_child(&here, &i.to_string()), why));
            }
        }
    }
    check_order(wanted, &idents, &here, at)?;
    Ok(idents)
}

/// Every element the patch lists must appear in `$setElementOrder`, in the same relative order.
fn check_order(listed: &[Value], order: &[Value], here: &str, at: &str) -> Result<()> {
    let mut next = 0;
    for entry in order {
        if listed.get(next).is_some_and(|v| json_eq(v, entry)) {
            next += 1;
        }
    }
    match listed.get(next) {
        None => Ok(()),
        Some(stray) => Err(malformed(
            here,
            format!(
                "does not match the list at {at}: {} is missing from it or out of order",
                brief(stray)
            ),
        )),
    }
}

/// Put `items` in order: those `order` names in its order, the rest interleaved by their place
/// in the document (see the module docs).
fn arrange(items: Vec<Item>, order: &[Value]) -> Vec<Value> {
    let mut named = Vec::new();
    let mut others = Vec::new();
    for item in items {
        let rank = item
            .ident
            .as_ref()
            .and_then(|id| order.iter().position(|o| json_eq(o, id)));
        match rank {
            Some(rank) => named.push((rank, item)),
            None => others.push(item),
        }
    }
    named.sort_by_key(|(rank, _)| *rank);
    let mut out = Vec::with_capacity(named.len() + others.len());
    let mut named = named.into_iter().map(|(_, item)| item).peekable();
    let mut others = others.into_iter().peekable();
    loop {
        let take_other = match (others.peek(), named.peek()) {
            (Some(other), Some(next)) => {
                matches!((other.live, next.live), (Some(a), Some(b)) if a < b)
            }
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let item = if take_other {
            others.next()
        } else {
            named.next()
        };
        out.extend(item.map(|item| item.value));
    }
    out
}

/// The pointer of a directive next to the field at `at`; `prefix` comes escaped (`/` as `~1`).
fn sibling(at: &str, prefix: &str) -> String {
    match at.rsplit_once('/') {
        Some((parent, name)) => format!("{parent}/{prefix}{name}"),
        None => format!("/{prefix}{at}"),
    }
}
