//! What a CRD rule's `self` is, as Kubernetes declares it to CEL from the structural schema
//! at the rule's node: its type for the static check (fields by their CEL-escaped names, the
//! resource root's `apiVersion`, `kind` and `metadata.name`/`generateName`), and its
//! [`Shape`] for the cost estimate (sizes from `maxLength`/`maxItems`/`maxProperties`, or what
//! fits in a request when unbounded, as kube's `SchemaDeclType`).

use std::collections::BTreeMap;

use flotilla_cel::cost::Shape;
use flotilla_cel::typecheck::{Fields, Type};
use serde_json::Value;

/// The most bytes a request may carry (kube-apiserver's limit the estimates assume).
pub const MAX_REQUEST_BYTES: u64 = 3 * 1024 * 1024;

/// The object type name of a resource root's `metadata`.
const META: &str = "@meta";

const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// A property's name as CEL sees it (`foo-bar` → `foo__dash__bar`), or `None` when it cannot
/// be named (then rules cannot reach it).
pub fn escape(name: &str) -> Option<String> {
    let first = name.chars().next()?;
    if first.is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let ok = |c: char| c.is_ascii_alphanumeric() || "_.-/".contains(c);
    if !name.chars().all(ok) {
        return None;
    }
    Some(
        name.replace("__", "__underscores__")
            .replace('.', "__dot__")
            .replace('-', "__dash__")
            .replace('/', "__slash__"),
    )
}

fn flag(s: &Value, k: &str) -> bool {
    s.get(k).and_then(Value::as_bool) == Some(true)
}

fn ty(s: &Value) -> &str {
    s.get("type").and_then(Value::as_str).unwrap_or("")
}

fn props(s: &Value) -> impl Iterator<Item = (String, &Value)> {
    s.get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((escape(k)?, v)))
}

fn additional(s: &Value) -> Option<&Value> {
    s.get("additionalProperties").filter(|a| a.is_object())
}

/// Whether `s` is a resource root (the CRD's root or an embedded resource).
fn resource_root(s: &Value, root: bool) -> bool {
    root || flag(s, "x-kubernetes-embedded-resource")
}

/// The static type of the value at `s`, whose JSON pointer in the schema is `at`.
pub fn type_of(s: &Value, at: &str, root: bool) -> Type {
    if flag(s, "x-kubernetes-int-or-string") {
        return Type::Dyn;
    }
    match ty(s) {
        "object" if additional(s).is_some() => {
            let a = additional(s).unwrap_or(&Value::Null);
            Type::Map(Box::new(type_of(
                a,
                &format!("{at}/additionalProperties"),
                flag(a, "x-kubernetes-embedded-resource"),
            )))
        }
        // Fields a schema keeps without declaring are not typed: the check lets them be.
        "object" if flag(s, "x-kubernetes-preserve-unknown-fields") => Type::Dyn,
        "object" => Type::Object(if resource_root(s, root) {
            format!("{at}#root")
        } else {
            at.to_owned()
        }),
        "array" => match s.get("items") {
            Some(i) => Type::List(Box::new(type_of(
                i,
                &format!("{at}/items"),
                flag(i, "x-kubernetes-embedded-resource"),
            ))),
            None => Type::Dyn,
        },
        "string" => match s.get("format").and_then(Value::as_str) {
            Some("byte") => Type::Bytes,
            Some("date" | "date-time" | "duration") => Type::Dyn,
            _ => Type::String,
        },
        "integer" => Type::Int,
        "number" => Type::Double,
        "boolean" => Type::Bool,
        _ => Type::Dyn,
    }
}

/// Field types of the object types [`type_of`] names, looked up in the schema they came from.
pub struct SchemaFields<'a> {
    /// The schema the type names point into.
    pub root: &'a Value,
}

impl Fields for SchemaFields<'_> {
    fn field(&self, object: &str, field: &str) -> Option<Type> {
        if object == META {
            return matches!(field, "name" | "generateName").then_some(Type::String);
        }
        let (at, is_root) = match object.strip_suffix("#root") {
            Some(at) => (at, true),
            None => (object, false),
        };
        let node = self.root.pointer(at)?;
        if let Some((k, child)) = props(node).find(|(k, _)| k == field) {
            if is_root && k == "metadata" {
                return Some(Type::Object(META.to_owned()));
            }
            let key = node["properties"]
                .as_object()?
                .iter()
                .find(|(name, _)| escape(name).as_deref() == Some(field))?
                .0
                .replace('~', "~0")
                .replace('/', "~1");
            return Some(type_of(
                child,
                &format!("{at}/properties/{key}"),
                flag(child, "x-kubernetes-embedded-resource"),
            ));
        }
        match (is_root, field) {
            (true, "apiVersion" | "kind") => Some(Type::String),
            (true, "metadata") => Some(Type::Object(META.to_owned())),
            _ => None,
        }
    }
}

/// The fewest bytes a value of `s` takes in JSON (kube's `MinSerializedSize`).
pub fn min_size(s: &Value) -> u64 {
    if flag(s, "x-kubernetes-int-or-string") {
        return 1;
    }
    match ty(s) {
        "object" if additional(s).is_some() => 2,
        "object" => {
            let required: Vec<&str> = s
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let props = s.get("properties").and_then(Value::as_object);
            2 + props
                .into_iter()
                .flatten()
                .filter(|(k, p)| required.contains(&k.as_str()) && p.get("default").is_none())
                .map(|(k, p)| k.len() as u64 + min_size(p) + 4)
                .sum::<u64>()
        }
        "array" => 2,
        "string" => match s.get("format").and_then(Value::as_str) {
            Some("duration") => 3,
            Some("date") => 12,
            Some("date-time") => 21,
            _ => 2,
        },
        "boolean" => 4,
        _ => 1,
    }
}

fn max_string(s: &Value) -> u64 {
    let unbounded = MAX_REQUEST_BYTES - 2;
    if let Some(n) = s.get("maxLength").and_then(Value::as_u64) {
        // maxLength counts runes; a rune is up to 4 bytes.
        return n.saturating_mul(4);
    }
    if let Some(values) = s.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .filter_map(Value::as_str)
            .map(|v| v.len() as u64)
            .max()
            .unwrap_or(0);
    }
    match s.get("format").and_then(Value::as_str) {
        Some("duration" | "date-time") => 32,
        Some("date") => 12,
        _ => unbounded,
    }
}

/// The shape of the value at `s` for the cost estimate.
pub fn shape_of(s: &Value, root: bool) -> Shape {
    let room = MAX_REQUEST_BYTES - 2;
    if flag(s, "x-kubernetes-int-or-string") {
        return Shape::Dyn(room);
    }
    match ty(s) {
        "object" if additional(s).is_some() => {
            let a = additional(s).unwrap_or(&Value::Null);
            let max = s
                .get("maxProperties")
                .and_then(Value::as_u64)
                .unwrap_or(room / (min_size(a) + 6));
            Shape::Map(
                Box::new(shape_of(a, flag(a, "x-kubernetes-embedded-resource"))),
                max,
            )
        }
        "object" => {
            let mut fields: BTreeMap<String, Shape> = props(s)
                .map(|(k, p)| (k, shape_of(p, flag(p, "x-kubernetes-embedded-resource"))))
                .collect();
            if resource_root(s, root) {
                let name = || Shape::String(room);
                fields.insert("apiVersion".into(), name());
                fields.insert("kind".into(), name());
                fields.insert(
                    "metadata".into(),
                    Shape::Object(
                        [("name".into(), name()), ("generateName".into(), name())].into(),
                    ),
                );
            }
            Shape::Object(fields)
        }
        "array" => {
            let Some(items) = s.get("items") else {
                return Shape::Dyn(room);
            };
            let max = s
                .get("maxItems")
                .and_then(Value::as_u64)
                .unwrap_or(room / (min_size(items) + 1));
            Shape::List(
                Box::new(shape_of(
                    items,
                    flag(items, "x-kubernetes-embedded-resource"),
                )),
                max,
            )
        }
        "string" => Shape::String(max_string(s)),
        _ => Shape::Scalar,
    }
}

#[cfg(test)]
mod tests;
