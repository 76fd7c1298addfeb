//! The one question patching and server-side apply ask of a schema: "what is field F of type T?".
//!
//! Strategic merge patch needs `patchStrategy`/`patchMergeKey`; server-side apply needs
//! `x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type`. Both walk an
//! object from a root type name down field by field. Built-in kinds answer from the Kubernetes
//! schemas (`openapi` module); custom resources answer from their CRD's structural schema, where a
//! type name is an opaque path string chosen by that implementation.

use std::sync::Arc;
/// How a field's value is shaped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldShape {
    /// string, number, boolean, or anything without further structure.
    Scalar,
    /// An object with named properties (a struct).
    Object,
    /// An object with arbitrary keys (`additionalProperties`): a map.
    Map,
    /// An array.
    List,
    /// Anything goes (`x-kubernetes-preserve-unknown-fields`, `RawExtension`, int-or-string).
    Unknown,
}

/// The JSON type a scalar field holds, when the schema says one (a Quantity, a string or a
/// number, has none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    /// A JSON string.
    String,
    /// A whole JSON number.
    Integer,
    /// Any JSON number.
    Number,
    /// `true` or `false`.
    Boolean,
}

/// `patchStrategy` values (Kubernetes allows a comma-separated combination, e.g. `merge,retainKeys`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchStrategy {
    /// Lists are merged (by `patch_merge_key` for lists of objects, as a set for scalars).
    Merge,
    /// The value is replaced whole.
    Replace,
    /// `$retainKeys` directive is honoured for this object.
    RetainKeys,
}

/// `x-kubernetes-list-type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListType {
    /// The list is one value, owned as a whole.
    Atomic,
    /// A list of unique scalars.
    Set,
    /// A list of objects identified by `list_map_keys`.
    Map,
}

/// `x-kubernetes-map-type` (also used for structs via `x-kubernetes-map-type: atomic`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapType {
    /// Each key is owned separately.
    Granular,
    /// The whole map is one value.
    Atomic,
}

/// What a schema knows about one field of one type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldInfo {
    /// The field's shape.
    pub shape: FieldShape,
    /// The type to look further fields up in: the field's own type for objects, the element type
    /// for lists, the value type for maps. `None` for scalars and unknown shapes.
    pub type_name: Option<String>,
    /// Shape of the elements (for lists) or values (for maps); `None` otherwise.
    pub item_shape: Option<FieldShape>,
    /// `x-kubernetes-patch-strategy`, empty when absent.
    pub patch_strategy: Vec<PatchStrategy>,
    /// `x-kubernetes-patch-merge-key`.
    pub patch_merge_key: Option<String>,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<ListType>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<MapType>,
    /// The JSON type of a scalar field, or of a list's or map's scalar items.
    pub scalar: Option<ScalarType>,
}

impl FieldInfo {
    /// A field about which nothing is known beyond its shape.
    pub fn plain(shape: FieldShape) -> Self {
        FieldInfo {
            shape,
            type_name: None,
            item_shape: None,
            patch_strategy: Vec::new(),
            patch_merge_key: None,
            list_type: None,
            list_map_keys: Vec::new(),
            map_type: None,
            scalar: None,
        }
    }
}

/// A schema that can be walked field by field.
pub trait SchemaLookup: Send + Sync {
    /// Field `field` of type `type_name`, or `None` when the type has no such field (or the type
    /// is unknown, e.g. for custom resources without a schema).
    fn field(&self, type_name: &str, field: &str) -> Option<Arc<FieldInfo>>;
}

/// A lookup that knows nothing: every list is atomic/replaced, every object merged key by key.
/// Used for custom resources without a structural schema and in tests.
pub struct NoSchema;

impl SchemaLookup for NoSchema {
    fn field(&self, _type_name: &str, _field: &str) -> Option<Arc<FieldInfo>> {
        None
    }
}
