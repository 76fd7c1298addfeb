//! Objects without their `metadata.managedFields`, for clients that ask
//! ([`flotilla_apis::names::OMIT_MANAGED_FIELDS_HEADER`]): cut out of the stored bytes, not
//! parsed and written again. Only `apiVersion`, `kind` and the metadata before
//! `managedFields` are scanned (the stored objects start with them); the rest is copied.

use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;

/// The object's JSON as a LIST or watch sends it: without `metadata.managedFields` when the
/// client asked ([`super::super::Ctx::omit_managed_fields`]).
pub(crate) fn as_asked(omit_managed_fields: bool, json: Bytes) -> Bytes {
    if omit_managed_fields {
        without_managed_fields(json)
    } else {
        json
    }
}

/// `json` without `metadata.managedFields`; `json` itself when it has none or is not laid
/// out as an object the scan can follow (then the client gets the whole object, as any
/// server would send it).
fn without_managed_fields(json: Bytes) -> Bytes {
    let Some((from, to)) = managed_fields_entry(&json) else {
        return json;
    };
    let mut out = Vec::with_capacity(json.len() - (to - from));
    out.extend_from_slice(&json[..from]);
    out.extend_from_slice(&json[to..]);
    Bytes::from(out)
}

/// Where the `managedFields` entry of the object's metadata lies, with the comma that joins
/// it to its neighbour, so that cutting it leaves valid JSON.
fn managed_fields_entry(json: &[u8]) -> Option<(usize, usize)> {
    let (meta, _) = entries(json, 0)?.find(|e| e.key == b"metadata")?.value;
    let mut before = None;
    for e in entries(json, meta)? {
        if e.key == b"managedFields" {
            return Some(match before {
                // After another entry: from that entry's end (the comma) to this one's.
                Some(end) => (end, e.value.1),
                // The first: to the start of the next entry, or the closing brace.
                None => (e.start, e.next),
            });
        }
        before = Some(e.value.1);
    }
    None
}

/// One `"key": value` entry of an object.
struct Entry<'a> {
    /// The key's text as written (escapes not undone: the keys looked for have none).
    key: &'a [u8],
    /// Where the entry's key starts.
    start: usize,
    /// Where its value starts and ends.
    value: (usize, usize),
    /// Where the next entry's key starts, or the closing brace is.
    next: usize,
}

/// The entries of the object whose `{` is the first non-blank byte at or after `at`.
fn entries(json: &[u8], at: usize) -> Option<impl Iterator<Item = Entry<'_>>> {
    let open = blank_from(json, at)?;
    (json[open] == b'{').then_some(())?;
    let mut pos = Some(blank_from(json, open + 1)?);
    Some(std::iter::from_fn(move || {
        let start = pos.take()?;
        if json[start] == b'}' {
            return None;
        }
        let (ks, ke) = value(json, start)?;
        (json.get(ks) == Some(&b'"')).then_some(())?;
        let colon = blank_from(json, ke)?;
        (json[colon] == b':').then_some(())?;
        let (vs, ve) = value(json, colon + 1)?;
        let after = blank_from(json, ve)?;
        let next = match json[after] {
            b',' => {
                let next = blank_from(json, after + 1)?;
                pos = Some(next);
                next
            }
            b'}' => after,
            _ => return None,
        };
        Some(Entry {
            key: &json[ks + 1..ke - 1],
            start: ks,
            value: (vs, ve),
            next,
        })
    }))
}

/// Where the JSON value starting at or after `at` (blanks skipped) starts and ends.
fn value(json: &[u8], at: usize) -> Option<(usize, usize)> {
    let rest = json.get(at..)?;
    let mut de = serde_json::Deserializer::from_slice(rest);
    let raw = <&RawValue>::deserialize(&mut de).ok()?.get();
    let start = raw.as_ptr() as usize - json.as_ptr() as usize;
    Some((start, start + raw.len()))
}

/// The first byte at or after `at` that is not JSON whitespace.
fn blank_from(json: &[u8], at: usize) -> Option<usize> {
    let skip = json
        .get(at..)?
        .iter()
        .position(|b| !matches!(b, b' ' | b'\n' | b'\r' | b'\t'))?;
    Some(at + skip)
}

#[cfg(test)]
mod tests;
