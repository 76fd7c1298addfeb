//! The `FieldsV1` encoding of a [`FieldSet`], byte for byte as the Kubernetes API server
//! writes it.
//!
//! Each path element becomes a JSON key: `f:<field>`, `k:<json object of key fields>`,
//! `v:<json value>` or `i:<index>`. A member without children is written as `{}`; a member
//! with children gets a `".": {}` entry in front of them; a node that only has children has no
//! `"."`. Keys are written in path-element order (fields, keys, values, indices, each sorted),
//! key fields sorted by name, and JSON strings inside `k:`/`v:` escaped as Go's encoder does
//! (`<`, `>`, `&` as `\u003c`, `\u003e`, `\u0026`), so stored sets survive a round trip.

use serde_json::{Map, Value};

use super::fieldset::FieldSet;
use super::path::{OrderedValue, PathElement};
use super::ApplyError;

impl FieldSet {
    /// Decodes a `fieldsV1` object.
    pub fn from_fields_v1(value: &Value) -> Result<FieldSet, ApplyError> {
        let obj = value
            .as_object()
            .ok_or_else(|| bad(format!("expected an object, got {value}")))?;
        let mut set = FieldSet::new();
        for (key, child) in obj {
            if key == "." {
                continue; // describes the parent, handled there
            }
            let pe = decode_element(key)?;
            let inner = child
                .as_object()
                .ok_or_else(|| bad(format!("{key:?}: expected an object")))?;
            if inner.is_empty() || inner.contains_key(".") {
                set.members.insert(pe.clone());
            }
            let sub = FieldSet::from_fields_v1(child)?;
            if !sub.is_empty() {
                set.children.insert(pe, sub);
            }
        }
        Ok(set)
    }

    /// Encodes the set as a `fieldsV1` object.
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.encode(false))
    }

    fn encode(&self, include_self: bool) -> Map<String, Value> {
        let mut out = Map::new();
        if include_self {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        // Members and children are both sorted; walk them together so the output is sorted.
        let mut members = self.members.iter().peekable();
        let mut children = self
            .children
            .iter()
            .filter(|(_, c)| !c.is_empty())
            .peekable();
        loop {
            let take_member = match (members.peek(), children.peek()) {
                (None, None) => break,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some(m), Some((c, _))) => *m < *c,
            };
            if take_member {
                let Some(pe) = members.next() else { break };
                let value = match self.children.get(pe).filter(|c| !c.is_empty()) {
                    Some(c) => {
                        children.next();
                        c.encode(true)
                    }
                    None => Map::new(),
                };
                out.insert(encode_element(pe), Value::Object(value));
            } else {
                let Some((pe, c)) = children.next() else {
                    break;
                };
                out.insert(encode_element(pe), Value::Object(c.encode(false)));
            }
        }
        out
    }
}

fn bad(why: String) -> ApplyError {
    ApplyError::InvalidFieldsV1(why)
}

fn decode_element(key: &str) -> Result<PathElement, ApplyError> {
    let (prefix, rest) = key
        .split_once(':')
        .ok_or_else(|| bad(format!("{key:?}: expected a f:, k:, v: or i: prefix")))?;
    match prefix {
        "f" => Ok(PathElement::Field(rest.to_string())),
        "v" => serde_json::from_str(rest)
            .map(|v| PathElement::Value(OrderedValue(v)))
            .map_err(|e| bad(format!("{key:?}: {e}"))),
        "i" => rest
            .parse()
            .map(PathElement::Index)
            .map_err(|e| bad(format!("{key:?}: {e}"))),
        "k" => {
            let v: Value = serde_json::from_str(rest).map_err(|e| bad(format!("{key:?}: {e}")))?;
            let Value::Object(fields) = v else {
                return Err(bad(format!("{key:?}: key must be a JSON object")));
            };
            let mut fields: Vec<_> = fields
                .into_iter()
                .map(|(k, v)| (k, OrderedValue(v)))
                .collect();
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
        _ => Err(bad(format!("{key:?}: unknown prefix {prefix:?}"))),
    }
}

/// The `fieldsV1` key of one element.
pub(crate) fn encode_element(pe: &PathElement) -> String {
    match pe {
        PathElement::Field(name) => format!("f:{name}"),
        PathElement::Value(v) => format!("v:{}", go_json(&v.0)),
        PathElement::Index(i) => format!("i:{i}"),
        PathElement::Key(fields) => {
            let mut s = String::from("k:{");
            for (i, (name, value)) in fields.iter().enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push_str(&go_json(&Value::String(name.clone())));
                s.push(':');
                s.push_str(&go_json(&value.0));
            }
            s.push('}');
            s
        }
    }
}

/// Compact JSON with Go's HTML-safe escaping. Outside strings JSON never holds these
/// characters, so replacing them everywhere only touches string contents.
fn go_json(v: &Value) -> String {
    let plain = v.to_string();
    if !plain.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return plain;
    }
    let mut out = String::with_capacity(plain.len() + 12);
    for c in plain.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}
