//! What apply needs to know about the type of each node: is it owned whole (atomic), field by
//! field (a struct or a granular map), or item by item (a list map or a set)?
//!
//! Answers come from a [`SchemaLookup`] walked down from the root type. Where the schema has
//! nothing to say, apply behaves as Kubernetes does for untyped values: objects are granular
//! maps and lists are atomic.

use serde_json::Value;

use super::path::{OrderedValue, PathElement};
use super::ApplyError;
use crate::schema::lookup::{
    FieldInfo, FieldShape, ListType, MapType, PatchStrategy, SchemaLookup,
};

/// The type of one node, as far as ownership is concerned.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Ty {
    /// Nothing known: shape follows the value (objects granular, everything else atomic).
    Untyped,
    /// A scalar, or an atomic list/map/struct: one value owned whole.
    Leaf,
    /// A struct whose fields are looked up in the named type.
    Struct(String),
    /// A granular map; every value has the given type.
    Map(Box<Ty>),
    /// A list of objects identified by the key fields.
    ListMap(Vec<String>, Box<Ty>),
    /// A list of unique scalars.
    ListSet,
}

/// How a node is walked, once its type and value are known.
pub(crate) enum Walk {
    /// Compared and replaced whole.
    Leaf,
    /// Walked key by key (a struct or a granular map).
    Fields,
    /// Walked item by item.
    Items,
}

/// Type resolution against a schema, plus the list-map key defaults.
pub(crate) struct Types<'a> {
    pub(crate) schema: &'a dyn SchemaLookup,
    /// Values for list-map key fields that an item may omit (`protocol` → `"TCP"`): the
    /// schema's defaults, which `FieldInfo` does not carry.
    pub(crate) key_defaults: &'a [(String, Value)],
}

impl Types<'_> {
    /// The type of field `name` under a node of type `parent`, and whether the schema
    /// declares it (declared struct fields are owned through their children; undeclared keys
    /// are owned themselves).
    pub(crate) fn field(&self, parent: &Ty, name: &str) -> (Ty, bool) {
        match parent {
            Ty::Struct(t) => match self.schema.field(t, name) {
                Some(info) => (from_info(&info), true),
                None => (Ty::Untyped, false),
            },
            Ty::Map(value) => ((**value).clone(), false),
            _ => (Ty::Untyped, false),
        }
    }

    /// The type of the items of a list.
    pub(crate) fn item(&self, list: &Ty) -> Ty {
        match list {
            Ty::ListMap(_, elem) => (**elem).clone(),
            _ => Ty::Leaf,
        }
    }

    /// The type under a child element, whatever its kind.
    pub(crate) fn child(&self, parent: &Ty, pe: &PathElement) -> Ty {
        match pe {
            PathElement::Field(name) => self.field(parent, name).0,
            _ => self.item(parent),
        }
    }

    /// How to walk `value` of type `ty`: the schema decides, unless the value does not have
    /// the shape the schema expects, in which case it is one opaque value.
    pub(crate) fn walk(&self, ty: &Ty, value: &Value) -> Walk {
        match (ty, value) {
            (Ty::Untyped | Ty::Struct(_) | Ty::Map(_), Value::Object(_)) => Walk::Fields,
            (Ty::ListMap(..) | Ty::ListSet, Value::Array(_)) => Walk::Items,
            _ => Walk::Leaf,
        }
    }

    /// The type children of an object of type `ty` are looked up in.
    pub(crate) fn as_object(&self, ty: &Ty) -> Ty {
        match ty {
            Ty::Untyped => Ty::Map(Box::new(Ty::Untyped)),
            other => other.clone(),
        }
    }

    /// The element identifying a list item: its keys (list map) or its value (set).
    pub(crate) fn item_element(&self, list: &Ty, item: &Value) -> Result<PathElement, ApplyError> {
        match list {
            Ty::ListMap(keys, _) => {
                let obj = item.as_object().ok_or_else(|| {
                    ApplyError::InvalidObject(format!("list map item {item} is not an object"))
                })?;
                let mut fields = Vec::with_capacity(keys.len());
                for key in keys {
                    let value = match obj.get(key) {
                        Some(v) => v.clone(),
                        None => self
                            .key_defaults
                            .iter()
                            .find(|(name, _)| name == key)
                            .map(|(_, v)| v.clone())
                            .ok_or_else(|| ApplyError::MissingListKey {
                                key: key.clone(),
                                item: item.to_string(),
                            })?,
                    };
                    fields.push((key.clone(), OrderedValue(value)));
                }
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(PathElement::Key(fields))
            }
            _ => Ok(PathElement::Value(OrderedValue(item.clone()))),
        }
    }
}

fn from_info(info: &FieldInfo) -> Ty {
    let atomic = info.map_type == Some(MapType::Atomic);
    match info.shape {
        FieldShape::Scalar => Ty::Leaf,
        FieldShape::Unknown => Ty::Untyped,
        FieldShape::Object if atomic => Ty::Leaf,
        FieldShape::Object => match &info.type_name {
            Some(name) => Ty::Struct(name.clone()),
            None => Ty::Untyped,
        },
        FieldShape::Map if atomic => Ty::Leaf,
        FieldShape::Map => Ty::Map(Box::new(element(info.item_shape, &info.type_name))),
        FieldShape::List => list(info),
    }
}

/// The type of list elements or map values.
fn element(shape: Option<FieldShape>, name: &Option<String>) -> Ty {
    match (shape, name) {
        (Some(FieldShape::Scalar | FieldShape::List), _) => Ty::Leaf,
        (Some(FieldShape::Object) | None, Some(name)) => Ty::Struct(name.clone()),
        (Some(FieldShape::Map), _) => Ty::Map(Box::new(Ty::Untyped)),
        _ => Ty::Untyped,
    }
}

fn list(info: &FieldInfo) -> Ty {
    let elem = || Box::new(element(info.item_shape, &info.type_name));
    match info.list_type {
        Some(ListType::Atomic) => Ty::Leaf,
        Some(ListType::Set) => Ty::ListSet,
        Some(ListType::Map) if info.list_map_keys.is_empty() => Ty::Leaf,
        Some(ListType::Map) => Ty::ListMap(info.list_map_keys.clone(), elem()),
        // Without x-kubernetes-list-type, Kubernetes derives the list type from the strategic
        // merge patch annotations: merge with a key is a list map, merge without one a set.
        None if info.patch_strategy.contains(&PatchStrategy::Merge) => {
            match &info.patch_merge_key {
                Some(key) => Ty::ListMap(vec![key.clone()], elem()),
                None => Ty::ListSet,
            }
        }
        None => Ty::Leaf,
    }
}
