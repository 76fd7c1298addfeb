//! [`SchemaLookup`](super::lookup::SchemaLookup) over definitions: field by field, following
//! `$ref`, `items` and `additionalProperties`.
//!
//! A type name is a definition name, optionally followed by `#` and a JSON pointer to an
//! inline schema inside it (`com.example.v1.Foo#/properties/spec/properties/ports/items`).

use serde_json::Value;

use super::kinds::names;
use super::lookup::{FieldInfo, FieldShape, ListType, MapType, PatchStrategy, ScalarType};
use super::refs::{deref, Defs};

/// Field `field` of type `type_name`.
pub(crate) fn field(defs: &dyn Defs, type_name: &str, field: &str) -> Option<FieldInfo> {
    let (def_name, pointer) = type_name.split_once('#').unwrap_or((type_name, ""));
    let root = defs.def(def_name)?;
    let node = if pointer.is_empty() {
        root
    } else {
        root.pointer(pointer)?
    };
    let (node, via) = deref(defs, node);
    let base = via.unwrap_or(type_name);
    match node.get("properties").and_then(|p| p.get(field)) {
        Some(prop) => Some(describe(defs, prop, child(base, &["properties", field]))),
        None if flag(node, "x-kubernetes-preserve-unknown-fields") => {
            Some(FieldInfo::plain(FieldShape::Unknown))
        }
        None => None,
    }
}

/// Whether the schema of `type_name` declares `field` among its properties (as opposed to
/// accepting any field through `x-kubernetes-preserve-unknown-fields`).
pub(crate) fn declares(defs: &dyn Defs, type_name: &str, field: &str) -> bool {
    let (def_name, pointer) = type_name.split_once('#').unwrap_or((type_name, ""));
    let Some(root) = defs.def(def_name) else {
        return false;
    };
    let node = if pointer.is_empty() {
        Some(root)
    } else {
        root.pointer(pointer)
    };
    node.map(|n| deref(defs, n).0)
        .and_then(|n| n.get("properties"))
        .is_some_and(|p| p.get(field).is_some())
}

/// `base` extended by JSON-pointer segments (escaped per RFC 6901).
fn child(base: &str, segments: &[&str]) -> String {
    let mut out = base.to_owned();
    if !out.contains('#') {
        out.push('#');
    }
    for s in segments {
        out.push('/');
        out.push_str(&s.replace('~', "~0").replace('/', "~1"));
    }
    out
}

fn describe(defs: &dyn Defs, prop: &Value, inline_name: String) -> FieldInfo {
    let (target, via) = deref(defs, prop);
    let own_name = via.map(str::to_owned).unwrap_or(inline_name);
    let shape = shape_of(target, via);
    // Extensions on the property win; a referenced definition may carry its own
    // (`x-kubernetes-map-type: atomic` on structs such as LabelSelector).
    let ext = |key: &str| prop.get(key).or_else(|| target.get(key));
    let mut info = FieldInfo::plain(shape);
    if shape == FieldShape::Scalar {
        info.scalar = scalar_of(target, via);
    }
    let element = match shape {
        FieldShape::Object => {
            info.type_name = Some(own_name.clone());
            None
        }
        FieldShape::List => target
            .get("items")
            .filter(|i| i.is_object())
            .map(|i| (i, "items")),
        FieldShape::Map => target
            .get("additionalProperties")
            .filter(|a| a.is_object())
            .map(|a| (a, "additionalProperties")),
        FieldShape::Scalar | FieldShape::Unknown => None,
    };
    if let Some((node, key)) = element {
        let (elem, elem_via) = deref(defs, node);
        let elem_shape = shape_of(elem, elem_via);
        info.item_shape = Some(elem_shape);
        if elem_shape == FieldShape::Scalar {
            info.scalar = scalar_of(elem, elem_via);
        }
        if matches!(
            elem_shape,
            FieldShape::Object | FieldShape::Map | FieldShape::List
        ) {
            info.type_name = Some(
                elem_via
                    .map(str::to_owned)
                    .unwrap_or_else(|| child(&own_name, &[key])),
            );
        }
    } else if shape == FieldShape::List {
        info.item_shape = Some(FieldShape::Unknown);
    }
    if let Some(s) = ext("x-kubernetes-patch-strategy").and_then(Value::as_str) {
        info.patch_strategy = s
            .split(',')
            .filter_map(|p| match p.trim() {
                "merge" => Some(PatchStrategy::Merge),
                "replace" => Some(PatchStrategy::Replace),
                "retainKeys" => Some(PatchStrategy::RetainKeys),
                _ => None,
            })
            .collect();
    }
    info.patch_merge_key = ext("x-kubernetes-patch-merge-key")
        .and_then(Value::as_str)
        .map(str::to_owned);
    info.list_type = match ext("x-kubernetes-list-type").and_then(Value::as_str) {
        Some("atomic") => Some(ListType::Atomic),
        Some("set") => Some(ListType::Set),
        Some("map") => Some(ListType::Map),
        _ => None,
    };
    info.list_map_keys = ext("x-kubernetes-list-map-keys")
        .and_then(Value::as_array)
        .map(|keys| {
            keys.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    info.map_type = match ext("x-kubernetes-map-type").and_then(Value::as_str) {
        Some("atomic") => Some(MapType::Atomic),
        Some("granular") => Some(MapType::Granular),
        _ => None,
    };
    info
}

/// The JSON type of a scalar schema (`def` names the definition it is, if any): none for a
/// Quantity, which Go's decoder reads from a string or a number.
fn scalar_of(node: &Value, def: Option<&str>) -> Option<ScalarType> {
    if def == Some(names::QUANTITY) {
        return None;
    }
    match node.get("type").and_then(Value::as_str)? {
        "string" => Some(ScalarType::String),
        "integer" => Some(ScalarType::Integer),
        "number" => Some(ScalarType::Number),
        "boolean" => Some(ScalarType::Boolean),
        _ => None,
    }
}

fn flag(node: &Value, key: &str) -> bool {
    node.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// The shape of a (dereferenced) schema; `def` names the definition it is, if any.
pub(crate) fn shape_of(node: &Value, def: Option<&str>) -> FieldShape {
    match def {
        // A string or a number, never structured.
        Some(names::QUANTITY) => return FieldShape::Scalar,
        Some(names::RAW_EXTENSION | names::JSON) => return FieldShape::Unknown,
        _ => {}
    }
    if flag(node, "x-kubernetes-int-or-string") {
        return FieldShape::Unknown;
    }
    let has_props = node
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    let has_additional = node
        .get("additionalProperties")
        .is_some_and(|a| a.is_object() || a == &Value::Bool(true));
    if flag(node, "x-kubernetes-preserve-unknown-fields") && !has_props {
        return FieldShape::Unknown;
    }
    match node.get("type").and_then(Value::as_str) {
        Some("object") | None if has_props => FieldShape::Object,
        Some("object") if has_additional => FieldShape::Map,
        Some("object") => FieldShape::Unknown,
        Some("array") => FieldShape::List,
        Some("string" | "integer" | "number" | "boolean") => FieldShape::Scalar,
        None if node.get("items").is_some() => FieldShape::List,
        None if has_additional => FieldShape::Map,
        _ => FieldShape::Unknown,
    }
}
