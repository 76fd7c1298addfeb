//! Field paths: the addresses that field sets are made of.
//!
//! A path is a list of elements, each one step down an object: a named field (`.spec`), an
//! item of a list map picked by its keys (`[name="nginx"]`), an item of a set picked by its
//! value (`[="a"]`), or a position in an atomic list (`[3]`). Elements sort the way the
//! structured-merge-diff library sorts them — fields, then keys, then values, then indices —
//! because that order decides how `fieldsV1` is written out.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

use super::ApplyError;

/// A JSON value with the total order Kubernetes uses for keys and set items: numbers (compared
/// numerically), then strings, booleans, lists, maps, and `null` last.
#[derive(Clone, Debug)]
pub struct OrderedValue(pub Value);

fn rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

/// The total order on JSON values described on [`OrderedValue`]; objects compare by their
/// sorted entries, so key order never matters.
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(x), Some(y)) => x.cmp(&y),
                _ => {
                    let (x, y) = (
                        x.as_f64().unwrap_or(f64::NAN),
                        y.as_f64().unwrap_or(f64::NAN),
                    );
                    x.partial_cmp(&y).unwrap_or(Ordering::Equal)
                }
            },
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (x, y) in x.iter().zip(y) {
                let c = compare_values(x, y);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<_> = x.iter().collect();
            let mut ys: Vec<_> = y.iter().collect();
            xs.sort_by(|a, b| a.0.cmp(b.0));
            ys.sort_by(|a, b| a.0.cmp(b.0));
            for ((xk, xv), (yk, yv)) in xs.iter().zip(&ys) {
                let c = xk.cmp(yk).then_with(|| compare_values(xv, yv));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

/// Whether two JSON values are the same value (`1` equals `1.0`, key order is ignored).
pub fn values_equal(a: &Value, b: &Value) -> bool {
    compare_values(a, b) == Ordering::Equal
}

impl PartialEq for OrderedValue {
    fn eq(&self, other: &Self) -> bool {
        values_equal(&self.0, &other.0)
    }
}

impl Eq for OrderedValue {}

impl PartialOrd for OrderedValue {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedValue {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_values(&self.0, &other.0)
    }
}

/// One step of a [`Path`]. The derived order (variant first) is the order Kubernetes uses.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathElement {
    /// A named field of an object or a key of a map: `f:<name>` in `fieldsV1`.
    Field(String),
    /// An item of a list map, by its key fields sorted by name: `k:{...}`.
    Key(Vec<(String, OrderedValue)>),
    /// An item of a set, by its value: `v:<json>`.
    Value(OrderedValue),
    /// A position in a list: `i:<n>`.
    Index(usize),
}

/// A path from the root of an object to one of its fields.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElement>);

/// How Kubernetes prints a value inside a path: strings quoted, everything else as JSON.
fn write_value(f: &mut fmt::Formatter<'_>, v: &Value) -> fmt::Result {
    write!(f, "{}", serde_json::to_string(v).map_err(|_| fmt::Error)?)
}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                f.write_str("[")?;
                for (i, (name, value)) in fields.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{name}=")?;
                    write_value(f, &value.0)?;
                }
                f.write_str("]")
            }
            PathElement::Value(value) => {
                f.write_str("[=")?;
                write_value(f, &value.0)?;
                f.write_str("]")
            }
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|pe| write!(f, "{pe}"))
    }
}

impl Path {
    /// Parses the printed form: `.spec.containers[name="app"].ports[containerPort=80,protocol="TCP"]`,
    /// `.metadata.finalizers[="a"]`, `.spec.args[0]`. Values after `=` are JSON.
    pub fn parse(text: &str) -> Result<Path, ApplyError> {
        let bad = |why: &str| ApplyError::InvalidPath(format!("{text:?}: {why}"));
        let mut out = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                if end == 0 {
                    return Err(bad("empty field name"));
                }
                out.push(PathElement::Field(r[..end].to_string()));
                rest = &r[end..];
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = closing_bracket(r).ok_or_else(|| bad("unclosed '['"))?;
                out.push(parse_bracket(&r[..end]).ok_or_else(|| bad("bad [...] element"))?);
                rest = &r[end + 1..];
            } else {
                return Err(bad("expected '.' or '['"));
            }
        }
        Ok(Path(out))
    }
}

/// Index of the `]` closing a bracket, skipping brackets inside JSON strings.
fn closing_bracket(s: &str) -> Option<usize> {
    let (mut in_str, mut escaped, mut depth) = (false, false, 0usize);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_str => escaped = true,
            '"' => in_str = !in_str,
            '[' | '{' if !in_str => depth += 1,
            '}' if !in_str => depth = depth.saturating_sub(1),
            ']' if !in_str && depth == 0 => return Some(i),
            ']' if !in_str => depth -= 1,
            _ => {}
        }
    }
    None
}

fn parse_bracket(inner: &str) -> Option<PathElement> {
    if let Some(v) = inner.strip_prefix('=') {
        return serde_json::from_str(v)
            .ok()
            .map(|v| PathElement::Value(OrderedValue(v)));
    }
    if let Ok(i) = inner.parse::<usize>() {
        return Some(PathElement::Index(i));
    }
    // `name=value,name=value`: a JSON value ends where the next `,name=` starts, so let the
    // JSON parser find the end of each value.
    let mut fields = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let eq = rest.find('=')?;
        let name = rest[..eq].to_string();
        let mut stream = serde_json::Deserializer::from_str(&rest[eq + 1..]).into_iter::<Value>();
        let value = stream.next()?.ok()?;
        let used = eq + 1 + stream.byte_offset();
        fields.push((name, OrderedValue(value)));
        rest = rest[used..].strip_prefix(',').unwrap_or(&rest[used..]);
    }
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    (!fields.is_empty()).then_some(PathElement::Key(fields))
}
