//! kubectl-style JSONPath for feedback rules, evaluated with an RFC 9535 engine.
//!
//! Users write feedback paths the way they write `kubectl get -o jsonpath` and CRD printer
//! columns: `.status.readyReplicas`, `{.status.conditions[?(@.type=="Ready")].status}`,
//! `.metadata.labels.app\.kubernetes\.io/name`. RFC 9535 differs in three ways that matter
//! here: it requires the leading `$`, it has no `{}` template braces, and its `.name` shorthand
//! forbids `-`, `/` and escaped dots, all common in Kubernetes keys. [`to_rfc9535`] rewrites
//! the kubectl form (every dotted name becomes a bracketed `['name']`); filters, indices,
//! slices and wildcards are the same in both and pass through unchanged. kubectl's template
//! features (`range`, literal text between expressions) are not supported: a rule reads one
//! expression.

use jsonpath_rust::JsonPath;
use serde_json::Value;

/// The values `path` (kubectl style) selects in `object`, in document order; empty when it
/// selects nothing. `Err` says why the path is not valid JSONPath.
pub fn query<'a>(object: &'a Value, path: &str) -> Result<Vec<&'a Value>, String> {
    let rfc = to_rfc9535(path)?;
    object
        .query(&rfc)
        .map_err(|e| format!("invalid JSONPath {path:?}: {e}"))
}

/// Rewrites a kubectl-style JSONPath as RFC 9535.
pub fn to_rfc9535(path: &str) -> Result<String, String> {
    let mut rest = path.trim();
    if let Some(inner) = rest.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        rest = inner.trim();
    }
    rest = rest.strip_prefix('$').unwrap_or(rest);
    let mut out = String::from("$");
    let mut chars = rest.chars().peekable();
    let mut first = true;
    while let Some(&c) = chars.peek() {
        match c {
            '[' => copy_bracket(&mut chars, &mut out, path)?,
            '.' => {
                chars.next();
                if chars.peek() == Some(&'.') {
                    chars.next();
                    out.push_str("..");
                    if chars.peek() == Some(&'[') {
                        copy_bracket(&mut chars, &mut out, path)?;
                    } else {
                        push_name(&mut out, &read_name(&mut chars), true);
                    }
                } else {
                    push_name(&mut out, &read_name(&mut chars), false);
                }
            }
            // kubectl also takes a path without its leading dot: `status.replicas`.
            _ if first => push_name(&mut out, &read_name(&mut chars), false),
            _ => return Err(format!("invalid JSONPath {path:?}: unexpected {c:?}")),
        }
        first = false;
    }
    Ok(out)
}

/// Reads a dotted name up to the next unescaped `.` or `[`; `\` escapes the next character.
fn read_name(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut name = String::new();
    while let Some(&c) = chars.peek() {
        match c {
            '.' | '[' => break,
            '\\' => {
                chars.next();
                if let Some(escaped) = chars.next() {
                    name.push(escaped);
                }
            }
            _ => {
                name.push(c);
                chars.next();
            }
        }
    }
    name
}

/// Appends `name` as a bracketed member selector (or a wildcard). `descendant` says `..` was
/// just written, which needs no further separator. An empty name (`{.}`, a trailing dot)
/// selects the current node, so nothing is appended.
fn push_name(out: &mut String, name: &str, descendant: bool) {
    match name {
        "" => {}
        "*" if descendant => out.push('*'),
        "*" => out.push_str("[*]"),
        _ => {
            out.push_str("['");
            for c in name.chars() {
                if matches!(c, '\'' | '\\') {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push_str("']");
        }
    }
}

/// Copies a `[...]` selector through its matching `]`, minding quoted strings and nesting
/// (filters hold brackets of their own).
fn copy_bracket(
    chars: &mut std::iter::Peekable<std::str::Chars<'_>>,
    out: &mut String,
    path: &str,
) -> Result<(), String> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in chars.by_ref() {
        out.push(c);
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '"' | '\'' => quote = Some(c),
            '[' => depth += 1,
            ']' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Ok(());
                }
            }
            _ => {}
        }
    }
    Err(format!("invalid JSONPath {path:?}: unclosed '['"))
}

#[cfg(test)]
mod tests;
