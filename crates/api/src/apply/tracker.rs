//! Tracking of ordinary writes (create, update, non-apply patch).
//!
//! The starting point is the stored managedFields — or the client's own, when it sent a
//! non-empty list to the main resource (clients may rewrite ownership; a list of one empty
//! entry, `[{}]`, clears it, while `[]` is ignored so that clients unaware of the field never
//! wipe it). Then every field the request added or modified goes to the manager and leaves
//! everyone else, and removed fields leave every set. The manager's time moves only when it
//! took something.

use serde_json::{Map, Value};

use super::diff::compare_stored;
use super::managed::{self, ManagedEntry, Operation};
use super::{Applier, ApplyError};

pub(crate) fn track_update(
    cx: &Applier<'_>,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    now: &str,
) -> Result<(), ApplyError> {
    let types = cx.types();
    let root = cx.root();
    let subresource = cx.subresource();
    if !new.is_object() {
        return Err(ApplyError::InvalidObject(
            "the object must be a JSON object".into(),
        ));
    }

    let stored = match old {
        Some(o) => managed::read(o)?,
        None => Vec::new(),
    };
    let sent = managed::raw(new).filter(|l| l.as_array().is_some_and(|a| !a.is_empty()));
    let (mut entries, from_stored) = match sent {
        // Subresources never rewrite ownership: their requests carry someone else's view.
        // A list sent back as it is stored (a patch's, or a read-modify-write's) is the
        // stored one.
        Some(list) if subresource.is_none() && old.and_then(managed::raw) != Some(list) => {
            if managed::is_reset(list) {
                (Vec::new(), false)
            } else {
                match managed::decode(list) {
                    Ok(sent) => (sent, false),
                    Err(_) => (stored, true),
                }
            }
        }
        _ => (stored, true),
    };
    // Entries whose fields do not change keep their `fieldsV1` as stored.
    let read = managed::as_read(old.filter(|_| from_stored), &entries);
    let mut kept = managed::unchanged(read, &entries);
    managed::remove(new);

    let empty = Value::Object(Map::new());
    let diff = compare_stored(&types, &root, old.unwrap_or(&empty), new)?;
    let taken = cx.ownable(&diff.changed());
    let removed = cx.in_scope(&diff.removed);

    let mine = entries
        .iter()
        .position(|e| e.is(manager, Operation::Update, subresource));
    for (i, e) in entries.iter_mut().enumerate() {
        if Some(i) != mine && e.fields.meets(&taken) {
            e.fields = e.fields.difference(&taken);
            kept[i] = false;
        }
        if e.fields.meets(&removed) {
            e.fields = e.fields.difference(&removed);
            kept[i] = false;
        }
    }
    if !taken.is_empty() {
        let api_version = new
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match mine {
            Some(i) => {
                let e = &mut entries[i];
                // A manager writing again what it already owns (a status writer's every
                // beat) keeps its `fieldsV1` as stored.
                if !e.fields.covers(&taken) {
                    e.fields = e.fields.union(&taken);
                    kept[i] = false;
                }
                e.time = Some(now.to_string());
                e.api_version = api_version.to_string();
            }
            None => entries.push(ManagedEntry {
                manager: manager.to_string(),
                operation: Operation::Update,
                subresource: subresource.map(String::from),
                api_version: api_version.to_string(),
                time: Some(now.to_string()),
                fields: taken,
            }),
        }
    }
    managed::write_unchanged(new, &entries, read, &kept);
    Ok(())
}
