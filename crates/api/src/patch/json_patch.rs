//! RFC 6902 JSON patch.
//!
//! The whole patch is parsed before anything is applied, so a malformed operation anywhere is
//! reported as such (400) rather than after some operations ran. Operations then apply in order
//! to a copy of the document; the first one that fails aborts the patch and the caller's
//! document is untouched (RFC 6902 §5: a patch is atomic).
//!
//! A patch cannot grow the document without bound ([`crate::limits`], as kube-apiserver's
//! json-patch options): it has at most 10,000 operations, its `copy`s add at most 3 MiB in
//! all (each copy is measured before it is made, so forty copies of a value into itself stop
//! at the limit instead of building 2^40 copies), and no operation may place a value deeper
//! than the hub reads back.

use serde_json::{Map, Value};

use super::{brief, json_eq, kind_of, show_pointer, PatchError, Result};
use crate::limits::{
    depth_within, json_len_within, MAX_DEPTH, MAX_JSON_PATCH_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS,
};

/// Apply an RFC 6902 JSON patch to `doc` and return the result; `doc` is not modified.
///
/// A patch that isn't a list of well-formed operations is [`PatchError::Malformed`]; an
/// operation whose path does not exist, or a failed `test`, is [`PatchError::Unprocessable`],
/// as is one that would copy more than the limit or nest too deep; more operations than the
/// limit are [`PatchError::TooLarge`].
pub fn json_patch(doc: &Value, patch: &Value) -> Result<Value> {
    let Value::Array(ops) = patch else {
        return Err(PatchError::Malformed(format!(
            "a JSON patch must be a list of operations, got {}",
            kind_of(patch)
        )));
    };
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        // kube-apiserver's words.
        return Err(PatchError::TooLarge(format!(
            "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
            ops.len()
        )));
    }
    let ops = ops
        .iter()
        .enumerate()
        .map(|(i, op)| Op::parse(i, op))
        .collect::<Result<Vec<_>>>()?;
    let mut out = doc.clone();
    let mut copy_budget = MAX_JSON_PATCH_COPY_BYTES;
    for (i, op) in ops.iter().enumerate() {
        op.apply(&mut out, &mut copy_budget).map_err(|why| {
            PatchError::Unprocessable(format!(
                "JSON patch operation {i} ({}): {why}",
                op.describe()
            ))
        })?;
    }
    Ok(out)
}

/// A parsed JSON pointer: its text (for messages) and its unescaped reference tokens.
#[derive(Debug, Clone)]
struct Pointer {
    text: String,
    tokens: Vec<String>,
}

impl Pointer {
    fn parse(text: &str) -> std::result::Result<Self, String> {
        if text.is_empty() {
            return Ok(Pointer {
                text: String::new(),
                tokens: Vec::new(),
            });
        }
        let Some(rest) = text.strip_prefix('/') else {
            return Err(format!(
                "{text:?} is not a JSON pointer: it must be empty or start with \"/\""
            ));
        };
        let tokens = rest
            .split('/')
            .map(|raw| unescape(raw, text))
            .collect::<std::result::Result<_, _>>()?;
        Ok(Pointer {
            text: text.to_string(),
            tokens,
        })
    }

    /// The pointer to the parent and the last token; `None` for the whole document.
    fn split_last(&self) -> Option<(&[String], &str)> {
        let (last, parent) = self.tokens.split_last()?;
        Some((parent, last.as_str()))
    }

    fn shown(&self) -> &str {
        show_pointer(&self.text)
    }
}

fn unescape(raw: &str, whole: &str) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '~' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('0') => out.push('~'),
            Some('1') => out.push('/'),
            _ => {
                return Err(format!(
                    "JSON pointer {whole:?} has a \"~\" not followed by 0 or 1 \
                     (write ~0 for \"~\", ~1 for \"/\")"
                ))
            }
        }
    }
    Ok(out)
}

/// One operation, checked for shape.
#[derive(Debug)]
enum Op<'p> {
    Add(Pointer, &'p Value),
    Remove(Pointer),
    Replace(Pointer, &'p Value),
    Move { from: Pointer, path: Pointer },
    Copy { from: Pointer, path: Pointer },
    Test(Pointer, &'p Value),
}

impl<'p> Op<'p> {
    fn parse(i: usize, op: &'p Value) -> Result<Self> {
        let bad = |why: String| PatchError::Malformed(format!("JSON patch operation {i}: {why}"));
        let Value::Object(fields) = op else {
            return Err(bad(format!(
                "an operation must be an object, got {}",
                kind_of(op)
            )));
        };
        let name = match fields.get("op") {
            Some(Value::String(name)) => name.as_str(),
            Some(other) => {
                return Err(bad(format!(
                    "\"op\" must be a string, got {}",
                    kind_of(other)
                )))
            }
            // As kube-apiserver's: an operation it cannot apply is 422, not a malformed patch.
            None => {
                return Err(PatchError::Unprocessable(format!(
                    "JSON patch operation {i}: \"op\" is missing"
                )))
            }
        };
        const OPS: [&str; 6] = ["add", "remove", "replace", "move", "copy", "test"];
        if !OPS.contains(&name) {
            return Err(PatchError::Unprocessable(format!(
                "JSON patch operation {i}: unknown op {name:?}; expected add, remove, replace, \
                 move, copy or test"
            )));
        }
        let path = pointer(fields, "path").map_err(|why| bad(format!("{name}: {why}")))?;
        let value = || {
            fields
                .get("value")
                .ok_or_else(|| bad(format!("{name} {}: \"value\" is missing", path.shown())))
        };
        let from = || {
            pointer(fields, "from").map_err(|why| bad(format!("{name} {}: {why}", path.shown())))
        };
        Ok(match name {
            "add" => Op::Add(path.clone(), value()?),
            "remove" => Op::Remove(path),
            "replace" => Op::Replace(path.clone(), value()?),
            "move" => Op::Move {
                from: from()?,
                path,
            },
            "copy" => Op::Copy {
                from: from()?,
                path,
            },
            _ => Op::Test(path.clone(), value()?),
        })
    }

    fn describe(&self) -> String {
        match self {
            Op::Add(p, _) => format!("add {}", p.shown()),
            Op::Remove(p) => format!("remove {}", p.shown()),
            Op::Replace(p, _) => format!("replace {}", p.shown()),
            Op::Move { from, path } => format!("move {} to {}", from.shown(), path.shown()),
            Op::Copy { from, path } => format!("copy {} to {}", from.shown(), path.shown()),
            Op::Test(p, _) => format!("test {}", p.shown()),
        }
    }

    /// Applies the operation; `copy_budget` is what copies may still add, in bytes.
    fn apply(&self, doc: &mut Value, copy_budget: &mut usize) -> std::result::Result<(), String> {
        match self {
            Op::Add(path, value) => {
                fits_at(path, value)?;
                add(doc, path, (*value).clone())
            }
            Op::Remove(path) => remove(doc, path).map(drop),
            Op::Replace(path, value) => {
                fits_at(path, value)?;
                let target = get_mut(doc, &path.tokens).ok_or_else(|| missing(path))?;
                *target = (*value).clone();
                Ok(())
            }
            Op::Move { from, path } => {
                if from.tokens == path.tokens {
                    return get(doc, &from.tokens)
                        .map(drop)
                        .ok_or_else(|| missing(from));
                }
                if path.tokens.starts_with(&from.tokens) {
                    return Err(format!(
                        "cannot move {} into its own child {}",
                        from.shown(),
                        path.shown()
                    ));
                }
                // Only a move deeper can nest the document deeper than it is.
                if path.tokens.len() > from.tokens.len() {
                    fits_at(path, get(doc, &from.tokens).ok_or_else(|| missing(from))?)?;
                }
                let value = remove(doc, from)?;
                add(doc, path, value)
            }
            Op::Copy { from, path } => {
                let value = get(doc, &from.tokens).ok_or_else(|| missing(from))?;
                // Measured before it is cloned, and only up to what is left to copy.
                let size = json_len_within(value, *copy_budget).ok_or_else(|| {
                    format!(
                        "the copies of this patch would add more than \
                         {MAX_JSON_PATCH_COPY_BYTES} bytes"
                    )
                })?;
                fits_at(path, value)?;
                *copy_budget -= size;
                let value = value.clone();
                add(doc, path, value)
            }
            Op::Test(path, expected) => {
                let actual = get(doc, &path.tokens).ok_or_else(|| missing(path))?;
                if json_eq(actual, expected) {
                    Ok(())
                } else {
                    Err(format!(
                        "test failed: {} is {}, not {}",
                        path.shown(),
                        brief(actual),
                        brief(expected)
                    ))
                }
            }
        }
    }
}

/// Whether `value` placed at `path` keeps the document within [`MAX_DEPTH`]: its containers
/// start one level below the `path.tokens.len()` containers above it.
fn fits_at(path: &Pointer, value: &Value) -> std::result::Result<(), String> {
    let room = MAX_DEPTH.saturating_sub(path.tokens.len());
    match depth_within(value, room) {
        Some(_) => Ok(()),
        None => Err(format!(
            "the result would be nested more than {MAX_DEPTH} levels deep"
        )),
    }
}

fn pointer(fields: &Map<String, Value>, name: &str) -> std::result::Result<Pointer, String> {
    match fields.get(name) {
        Some(Value::String(text)) => Pointer::parse(text),
        Some(other) => Err(format!("{name:?} must be a string, got {}", kind_of(other))),
        None => Err(format!("{name:?} is missing")),
    }
}

fn missing(path: &Pointer) -> String {
    format!("path {} does not exist", path.shown())
}

/// An array index as RFC 6901 spells it: `0` or digits without a leading zero.
fn index(token: &str) -> Option<usize> {
    let digits = token.bytes().all(|b| b.is_ascii_digit());
    if token.is_empty() || !digits || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

fn get<'d>(doc: &'d Value, tokens: &[String]) -> Option<&'d Value> {
    tokens.iter().try_fold(doc, |node, token| match node {
        Value::Object(members) => members.get(token),
        Value::Array(items) => items.get(index(token)?),
        _ => None,
    })
}

fn get_mut<'d>(doc: &'d mut Value, tokens: &[String]) -> Option<&'d mut Value> {
    tokens.iter().try_fold(doc, |node, token| match node {
        Value::Object(members) => members.get_mut(token),
        Value::Array(items) => items.get_mut(index(token)?),
        _ => None,
    })
}

fn add(doc: &mut Value, path: &Pointer, value: Value) -> std::result::Result<(), String> {
    let Some((parent, last)) = path.split_last() else {
        *doc = value;
        return Ok(());
    };
    let container = get_mut(doc, parent)
        .ok_or_else(|| format!("the parent of {} does not exist", path.shown()))?;
    match container {
        // insert keeps an existing member where it was, which is what "replace its value" means.
        Value::Object(members) => {
            members.insert(last.to_string(), value);
        }
        Value::Array(items) if last == "-" => items.push(value),
        Value::Array(items) => match index(last) {
            Some(i) if i <= items.len() => items.insert(i, value),
            Some(i) => {
                return Err(format!(
                    "index {i} is past the end of a list of {}",
                    items.len()
                ))
            }
            None => {
                return Err(format!(
                    "{last:?} is not a list index (use digits, or \"-\" to append)"
                ))
            }
        },
        other => {
            return Err(format!(
                "the parent of {} is {}, which has no members",
                path.shown(),
                kind_of(other)
            ))
        }
    }
    Ok(())
}

fn remove(doc: &mut Value, path: &Pointer) -> std::result::Result<Value, String> {
    let Some((parent, last)) = path.split_last() else {
        return Err("cannot remove the whole document".into());
    };
    match get_mut(doc, parent) {
        Some(Value::Object(members)) => members.shift_remove(last).ok_or_else(|| missing(path)),
        Some(Value::Array(items)) => match index(last) {
            Some(i) if i < items.len() => Ok(items.remove(i)),
            _ => Err(missing(path)),
        },
        _ => Err(missing(path)),
    }
}
