//! A small YAML writer for JSON values, for the `Any.yaml` strings of gnostic's OpenAPI messages.
//!
//! gnostic stores every free-form value (vendor extensions, `default`, `example`, `enum` members)
//! as YAML text, and its readers (kubectl, kube-openapi) parse it with `yaml.v2`/`yaml.v3`. The
//! output is block style like gnostic's own, and deliberately conservative: a string is written
//! plain only when no YAML 1.1 or 1.2 reader could take it for anything but a string, otherwise
//! it is double-quoted with JSON-compatible escapes.

use serde_json::Value;
use std::fmt::Write as _;

/// Renders `value` as a YAML document (no `---`, ending in a newline), as gnostic would store it.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => write_block(value, 0, &mut out),
        Value::Array(items) if !items.is_empty() => write_block(value, 0, &mut out),
        _ => {
            write_scalar(value, &mut out);
            out.push('\n');
        }
    }
    out
}

/// Whether `value` is written as an indented block (a non-empty mapping or sequence).
fn is_block(value: &Value) -> bool {
    match value {
        Value::Object(map) => !map.is_empty(),
        Value::Array(items) => !items.is_empty(),
        _ => false,
    }
}

/// Writes a non-empty mapping or sequence, every line starting with `indent` spaces.
fn write_block(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                out.push_str(&pad);
                write_string(key, out);
                out.push(':');
                if is_block(item) {
                    out.push('\n');
                    write_block(item, indent + 2, out);
                } else {
                    out.push(' ');
                    write_scalar(item, out);
                    out.push('\n');
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                out.push_str(&pad);
                out.push_str("- ");
                if is_block(item) {
                    // The nested block's first line goes on the dash's line: render it two columns
                    // further in and drop that first line's padding.
                    let mut nested = String::new();
                    write_block(item, indent + 2, &mut nested);
                    out.push_str(nested.get(indent + 2..).unwrap_or_default());
                } else {
                    write_scalar(item, out);
                    out.push('\n');
                }
            }
        }
        _ => {
            out.push_str(&pad);
            write_scalar(value, out);
            out.push('\n');
        }
    }
}

/// Writes a scalar, or an empty mapping/sequence in flow style.
fn write_scalar(value: &Value, out: &mut String) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(s, out),
        Value::Array(_) => out.push_str("[]"),
        Value::Object(_) => out.push_str("{}"),
    }
}

/// Words that YAML 1.1 (`yaml.v2`) reads as booleans or null when unquoted.
const RESERVED: &[&str] = &[
    "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
];

/// A string may go unquoted if it is a plain identifier-like word that no reader resolves to a
/// bool, null or number (numbers cannot start with a letter, `_` or `/`).
fn is_plain(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == '_' || first == '/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-'))
        && !RESERVED.iter().any(|word| word.eq_ignore_ascii_case(s))
}

fn write_string(s: &str, out: &mut String) {
    if is_plain(s) {
        out.push_str(s);
        return;
    }
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            // Control characters, and the characters YAML treats as line breaks or a BOM.
            c if (c as u32) < 0x20
                || c == '\u{7f}'
                || c == '\u{85}'
                || c == '\u{2028}'
                || c == '\u{2029}'
                || c == '\u{feff}' =>
            {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::to_yaml;
    use serde_json::json;

    #[test]
    fn renders_like_gnostic() {
        let cases = [
            (
                json!([{"group": "", "kind": "Pod", "version": "v1"}]),
                "- group: \"\"\n  kind: Pod\n  version: v1\n",
            ),
            (
                json!({"group": "apps", "kind": "Deployment", "version": "v1"}),
                "group: apps\nkind: Deployment\nversion: v1\n",
            ),
            (json!("merge"), "merge\n"),
            (
                json!(["containerPort", "protocol"]),
                "- containerPort\n- protocol\n",
            ),
            (json!(true), "true\n"),
            (json!(3), "3\n"),
            (json!({}), "{}\n"),
            (
                json!({"a": [], "b": {"c": [1, [2, 3]]}}),
                "a: []\nb:\n  c:\n    - 1\n    - - 2\n      - 3\n",
            ),
            (
                json!(["yes", "1.0", "a b", "x:y", "-1", ""]),
                "- \"yes\"\n- \"1.0\"\n- \"a b\"\n- \"x:y\"\n- \"-1\"\n- \"\"\n",
            ),
            (
                json!("line\nnext \"q\" \u{2028}"),
                "\"line\\nnext \\\"q\\\" \\u2028\"\n",
            ),
        ];
        for (value, want) in cases {
            assert_eq!(to_yaml(&value), want, "for {value}");
        }
    }
}
