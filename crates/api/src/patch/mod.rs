//! The three PATCH dialects the hub accepts, as pure functions over `serde_json::Value`.
//!
//! - [`json_patch`]: RFC 6902 JSON patch (`application/json-patch+json`), a list of operations
//!   applied atomically: either every operation applies or the document is left untouched.
//! - [`merge_patch`]: RFC 7386 JSON merge patch (`application/merge-patch+json`), what
//!   `kubectl label`, `kubectl annotate` and `kubectl scale` send.
//! - [`strategic_merge_patch`]: Kubernetes strategic merge patch
//!   (`application/strategic-merge-patch+json`), what `kubectl apply` (client-side), `kubectl
//!   edit`, `kubectl set image` and `kubectl rollout restart` send. It needs to know, field by
//!   field, how lists are merged; it asks a [`SchemaLookup`] from a root type name down.
//!
//! [`SchemaLookup`]: crate::schema::lookup::SchemaLookup
//!
//! Nothing here does I/O or knows about HTTP; the handlers map [`PatchError::Malformed`] to
//! 400 Bad Request, [`PatchError::Unprocessable`] to 422 Unprocessable Entity and
//! [`PatchError::TooLarge`] to 413 Request Entity Too Large. Every message
//! names the JSON pointer of the offending place so a user can find it in what they sent.
//!
//! Objects keep their key order (serde_json's `preserve_order`): patched keys stay where they
//! were, new keys are appended, removed keys close ranks.

mod json_patch;
mod merge_patch;
mod strategic;

#[cfg(test)]
mod tests;

pub use json_patch::json_patch;
pub use merge_patch::merge_patch;
pub use strategic::strategic_merge_patch;

use serde_json::Value;

/// Why a patch could not be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PatchError {
    /// The patch document itself is malformed (HTTP 400).
    #[error("{0}")]
    Malformed(String),
    /// The patch is well formed but cannot be applied to this document: a JSON-patch `test`
    /// failed, or a path does not exist or cannot be applied (HTTP 422).
    #[error("{0}")]
    Unprocessable(String),
    /// The patch has more operations than a patch may have (HTTP 413).
    #[error("{0}")]
    TooLarge(String),
}

/// Result of applying a patch.
pub type Result<T, E = PatchError> = std::result::Result<T, E>;

/// JSON equality as the RFCs define it: numbers are equal when numerically equal (`1 == 1.0`),
/// objects are equal when they have the same members whatever their order.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.as_u64(), y.as_u64()) {
                (Some(x), Some(y), _, _) => x == y,
                (_, _, Some(x), Some(y)) => x == y,
                _ => x.as_f64() == y.as_f64(),
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| json_eq(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// `at` extended by one reference token, escaped as RFC 6901 requires (`~` → `~0`, `/` → `~1`).
fn pointer_child(at: &str, token: &str) -> String {
    format!("{at}/{}", token.replace('~', "~0").replace('/', "~1"))
}

/// A JSON pointer as shown to users: the empty pointer (the whole document) is spelled out.
fn show_pointer(at: &str) -> &str {
    if at.is_empty() {
        "the top level"
    } else {
        at
    }
}

/// What kind of JSON value this is, in the words a user would use.
fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// A value for an error message, cut short so a large object doesn't drown the message.
fn brief(value: &Value) -> String {
    const LIMIT: usize = 120;
    let text = value.to_string();
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
