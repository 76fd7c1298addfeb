//! `metadata.managedFields`: reading, writing and ordering the entries.
//!
//! An entry is identified by (manager, operation, subresource); its `apiVersion` is the
//! version the last request of that manager used. Entries are written in the order Kubernetes
//! writes them — `Apply` before `Update`, then oldest first, then by manager name — and an
//! entry that owns nothing is never written.

use serde_json::{Map, Value};

use super::fieldset::FieldSet;
use super::ApplyError;

/// The operation that produced a managedFields entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update or a non-apply patch.
    Update,
}

impl Operation {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}

/// One decoded `metadata.managedFields` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct ManagedEntry {
    /// The field manager's name.
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: Operation,
    /// The subresource the request went to, if any.
    pub subresource: Option<String>,
    /// The API version the fields are expressed in.
    pub api_version: String,
    /// RFC 3339 time of the last change by this manager.
    pub time: Option<String>,
    /// The fields this manager owns.
    pub fields: FieldSet,
}

impl ManagedEntry {
    /// Whether this entry belongs to the given manager identity.
    pub fn is(&self, manager: &str, operation: Operation, subresource: Option<&str>) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
    }

    /// The manager as Kubernetes prints it in conflicts: `"name"`, then `with subresource "s"`
    /// when set, then `using <apiVersion>` for `Update` managers.
    pub fn describe(&self) -> String {
        let mut s = quoted(&self.manager);
        if let Some(sub) = &self.subresource {
            s.push_str(&format!(" with subresource {}", quoted(sub)));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

fn quoted(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn bad(why: String) -> ApplyError {
    ApplyError::InvalidManagedFields(why)
}

fn str_field<'a>(entry: &'a Map<String, Value>, name: &str) -> Result<Option<&'a str>, ApplyError> {
    match entry.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(bad(format!("{name} must be a string, got {other}"))),
    }
}

/// The raw `metadata.managedFields` of an object, if present and not `null`.
pub(crate) fn raw(obj: &Value) -> Option<&Value> {
    obj.get("metadata")?
        .get("managedFields")
        .filter(|v| !v.is_null())
}

/// Whether a client-sent list asks for managedFields to be cleared: exactly one entry, empty.
pub(crate) fn is_reset(list: &Value) -> bool {
    match list.as_array().map(Vec::as_slice) {
        Some([Value::Object(entry)]) => entry.values().all(|v| match v {
            Value::Null => true,
            Value::String(s) => s.is_empty(),
            Value::Object(m) => m.is_empty(),
            _ => false,
        }),
        _ => false,
    }
}

/// Decodes an object's managedFields (none when absent). Entries with the same identity are
/// folded into one, as Kubernetes keeps one entry per identity.
pub(crate) fn read(obj: &Value) -> Result<Vec<ManagedEntry>, ApplyError> {
    match raw(obj) {
        None => Ok(Vec::new()),
        Some(list) => decode(list),
    }
}

/// Decodes a managedFields list.
pub(crate) fn decode(list: &Value) -> Result<Vec<ManagedEntry>, ApplyError> {
    let items = list
        .as_array()
        .ok_or_else(|| bad(format!("expected a list, got {list}")))?;
    let mut out: Vec<ManagedEntry> = Vec::with_capacity(items.len());
    for item in items {
        let entry = item
            .as_object()
            .ok_or_else(|| bad(format!("entry must be an object, got {item}")))?;
        let operation = match str_field(entry, "operation")? {
            Some("Apply") => Operation::Apply,
            Some("Update") => Operation::Update,
            other => {
                return Err(bad(format!(
                    "operation must be Apply or Update, got {other:?}"
                )))
            }
        };
        match str_field(entry, "fieldsType")? {
            None | Some("FieldsV1") => {}
            Some(other) => return Err(bad(format!("unsupported fieldsType {other:?}"))),
        }
        let fields = match entry.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::new(),
            Some(v) => FieldSet::from_fields_v1(v).map_err(|e| bad(e.to_string()))?,
        };
        let decoded = ManagedEntry {
            manager: str_field(entry, "manager")?.unwrap_or_default().to_string(),
            operation,
            subresource: str_field(entry, "subresource")?
                .filter(|s| !s.is_empty())
                .map(String::from),
            api_version: str_field(entry, "apiVersion")?
                .unwrap_or_default()
                .to_string(),
            time: str_field(entry, "time")?.map(String::from),
            fields,
        };
        let same = out.iter_mut().find(|e| {
            e.is(
                &decoded.manager,
                decoded.operation,
                decoded.subresource.as_deref(),
            )
        });
        match same {
            Some(e) => {
                e.fields = e.fields.union(&decoded.fields);
                if decoded.time > e.time {
                    e.time = decoded.time;
                }
            }
            None => out.push(decoded),
        }
    }
    Ok(out)
}

/// Encodes entries as a managedFields list, sorted, skipping entries that own nothing; entry
/// `i`'s `fieldsV1` is `kept(i)` where that gives it: the entry's fields as read, when they did
/// not change (encoding a large set again costs more than copying what was read).
pub(crate) fn encode_keeping<'a>(
    entries: &[ManagedEntry],
    kept: impl Fn(usize) -> Option<&'a Value>,
) -> Value {
    let mut sorted: Vec<(usize, &ManagedEntry)> = entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.fields.is_empty())
        .collect();
    sorted.sort_by(|(_, p), (_, q)| {
        (
            p.operation,
            &p.time,
            &p.manager,
            &p.api_version,
            &p.subresource,
        )
            .cmp(&(
                q.operation,
                &q.time,
                &q.manager,
                &q.api_version,
                &q.subresource,
            ))
    });
    let list = sorted
        .into_iter()
        .map(|(i, e)| {
            let mut m = Map::new();
            m.insert("manager".into(), e.manager.clone().into());
            m.insert("operation".into(), e.operation.as_str().into());
            m.insert("apiVersion".into(), e.api_version.clone().into());
            if let Some(t) = &e.time {
                m.insert("time".into(), t.clone().into());
            }
            m.insert("fieldsType".into(), "FieldsV1".into());
            let fields = kept(i).cloned();
            m.insert(
                "fieldsV1".into(),
                fields.unwrap_or_else(|| e.fields.to_fields_v1()),
            );
            if let Some(s) = &e.subresource {
                m.insert("subresource".into(), s.clone().into());
            }
            Value::Object(m)
        })
        .collect();
    Value::Array(list)
}

/// Removes `metadata.managedFields` from an object.
pub(crate) fn remove(obj: &mut Value) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.shift_remove("managedFields");
    }
}

/// The stored entries of `obj` as read, when `entries` were decoded from them one for one (none
/// folded into another); empty otherwise. Where an entry's fields do not change, its
/// `fieldsV1` can be written back as read ([`write_unchanged`]).
pub(crate) fn as_read<'a>(obj: Option<&'a Value>, entries: &[ManagedEntry]) -> &'a [Value] {
    obj.and_then(raw)
        .and_then(Value::as_array)
        .filter(|items| {
            items.len() == entries.len()
                && items.iter().zip(entries).all(|(item, e)| {
                    item.get("manager").and_then(Value::as_str) == Some(e.manager.as_str())
                })
        })
        .map_or(&[], Vec::as_slice)
}

/// Which entries are still as read: all of them when `read` has them, none otherwise.
pub(crate) fn unchanged(read: &[Value], entries: &[ManagedEntry]) -> Vec<bool> {
    vec![!read.is_empty(); entries.len()]
}

/// Stores entries as the object's `metadata.managedFields` (removed when none own anything),
/// keeping the key's position when it was already there; the `fieldsV1` of the entries
/// `unchanged` marks is taken from `read` ([`as_read`]) instead of encoded again.
pub(crate) fn write_unchanged(
    obj: &mut Value,
    entries: &[ManagedEntry],
    read: &[Value],
    unchanged: &[bool],
) {
    let encoded = encode_keeping(entries, |i| {
        unchanged
            .get(i)
            .filter(|k| **k)
            .and_then(|_| read.get(i)?.get("fieldsV1"))
    });
    let empty = encoded.as_array().is_some_and(Vec::is_empty);
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    if empty {
        if let Some(meta) = root.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.shift_remove("managedFields");
        }
        return;
    }
    let meta = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Some(meta) = meta.as_object_mut() {
        match meta.get_mut("managedFields") {
            Some(slot) => *slot = encoded,
            None => {
                meta.insert("managedFields".into(), encoded);
            }
        }
    }
}
