//! Merging an applied configuration into a live object.
//!
//! Structs and granular maps merge key by key (the live object's key order is kept, new keys
//! are appended); list maps and sets merge item by item; everything atomic is replaced by the
//! applied value. For lists, the order of the result keeps the applied items in the applied
//! order and slots the items only the live object has in between, where they stood relative
//! to their neighbours — the same interleaving Kubernetes produces.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value};

use super::path::PathElement;
use super::typed::{Ty, Types, Walk};
use super::ApplyError;

/// `applied` merged over `live` (which may be absent), both of type `ty`.
pub(crate) fn merge(
    types: &Types<'_>,
    ty: &Ty,
    live: Option<&Value>,
    applied: &Value,
) -> Result<Value, ApplyError> {
    let Some(live) = live else {
        return Ok(applied.clone());
    };
    match (types.walk(ty, live), types.walk(ty, applied), live, applied) {
        (Walk::Fields, Walk::Fields, Value::Object(l), Value::Object(a)) => {
            // Live keys in live order (merged where applied), then applied keys new to it;
            // a live value is copied once, not copied and then merged over.
            let oty = types.as_object(ty);
            let mut out = Map::with_capacity(l.len() + a.len());
            for (key, lv) in l {
                let merged = match a.get(key) {
                    Some(av) => merge(types, &types.field(&oty, key).0, Some(lv), av)?,
                    None => lv.clone(),
                };
                out.insert(key.clone(), merged);
            }
            for (key, av) in a {
                if !l.contains_key(key) {
                    let merged = merge(types, &types.field(&oty, key).0, None, av)?;
                    out.insert(key.clone(), merged);
                }
            }
            Ok(Value::Object(out))
        }
        (Walk::Items, Walk::Items, Value::Array(l), Value::Array(a)) => {
            merge_items(types, ty, l, a).map(Value::Array)
        }
        _ => Ok(applied.clone()),
    }
}

/// Item-by-item merge of a list map or set.
fn merge_items(
    types: &Types<'_>,
    ty: &Ty,
    live: &[Value],
    applied: &[Value],
) -> Result<Vec<Value>, ApplyError> {
    let ity = types.item(ty);
    // Applied items must be unique; live duplicates (older data) pass through untouched.
    let mut rhs = Vec::with_capacity(applied.len());
    let mut rhs_keys = BTreeSet::new();
    for item in applied {
        let pe = types.item_element(ty, item)?;
        if !rhs_keys.insert(pe.clone()) {
            return Err(ApplyError::DuplicateKey {
                key: pe.to_string(),
            });
        }
        rhs.push((pe, item));
    }
    let mut first_live: BTreeMap<PathElement, &Value> = BTreeMap::new();
    let mut lhs: Vec<(Option<PathElement>, &Value)> = Vec::with_capacity(live.len());
    for item in live {
        let pe = types.item_element(ty, item)?;
        let first = !first_live.contains_key(&pe);
        if first {
            first_live.insert(pe.clone(), item);
        }
        lhs.push((first.then_some(pe), item));
    }
    // Items in both lists, in applied order: the applied order wins for them.
    let mut shared: VecDeque<&PathElement> = rhs
        .iter()
        .map(|(pe, _)| pe)
        .filter(|pe| first_live.contains_key(*pe))
        .collect();

    let mut out = Vec::with_capacity(live.len() + applied.len());
    let mut emitted = BTreeSet::new();
    let (mut i, mut j) = (0, 0);
    while i < lhs.len() || j < rhs.len() {
        if i < lhs.len() && j < rhs.len() {
            if lhs[i].0.as_ref() == Some(&rhs[j].0) {
                let pe = &rhs[j].0;
                out.push(merge(types, &ity, Some(lhs[i].1), rhs[j].1)?);
                emitted.insert(pe.clone());
                if shared.front() == Some(&pe) {
                    shared.pop_front();
                }
                i += 1;
                j += 1;
                continue;
            }
            // A shared item that the applied list puts later: it is emitted when reached there.
            if let Some(pe) = &lhs[i].0 {
                if rhs_keys.contains(pe) && shared.front().is_some_and(|s| *s != pe) {
                    i += 1;
                    continue;
                }
            }
        }
        if i < lhs.len() {
            match &lhs[i].0 {
                None => {
                    out.push(lhs[i].1.clone());
                    i += 1;
                    continue;
                }
                Some(pe) if !rhs_keys.contains(pe) => {
                    out.push(lhs[i].1.clone());
                    i += 1;
                    continue;
                }
                Some(pe) if emitted.contains(pe) => {
                    i += 1;
                    continue;
                }
                Some(_) => {}
            }
        }
        if j < rhs.len() {
            let (pe, item) = &rhs[j];
            out.push(merge(types, &ity, first_live.get(pe).copied(), item)?);
            emitted.insert(pe.clone());
            if shared.front() == Some(&pe) {
                shared.pop_front();
            }
            j += 1;
        }
    }
    Ok(out)
}
