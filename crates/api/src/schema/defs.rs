//! [`SchemaLookup`] over the OpenAPI definitions the hub serves, with the patch and list
//! markers of built-in kinds from the generated [`patch_meta`](super::patch_meta) table.
//!
//! Type names are definition names (`io.k8s.api.core.v1.PodSpec`); inline schemas (CRDs) are
//! addressed as `<definition>#<json pointer>` so nested objects have names too.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::lookup::{FieldInfo, FieldShape, ListType, MapType, PatchStrategy, SchemaLookup};
use super::patch_meta::{Row, ROWS};
use crate::openapi::OpenApi;

fn norm(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '_')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Definitions plus markers.
pub struct DefinitionLookup {
    openapi: Arc<OpenApi>,
    markers: HashMap<(String, String), &'static Row>,
}

impl DefinitionLookup {
    /// Index the markers once.
    pub fn new(openapi: Arc<OpenApi>) -> DefinitionLookup {
        let markers = ROWS
            .iter()
            .map(|r| ((r.0.to_string(), norm(r.1)), r))
            .collect();
        DefinitionLookup { openapi, markers }
    }

    fn node(&self, type_name: &str) -> Option<Value> {
        let (def, ptr) = type_name.split_once('#').unwrap_or((type_name, ""));
        let d = self.openapi.definition(def)?;
        if ptr.is_empty() {
            Some(d)
        } else {
            d.pointer(ptr).cloned()
        }
    }

    /// Does the schema at `type_name` keep fields it doesn't define?
    pub fn preserves_unknown(&self, type_name: &str) -> bool {
        self.node(type_name).is_none_or(|n| {
            n.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
                || n.get("properties").is_none()
        })
    }

    /// Shape and next type name of a schema node found at `here` (a type name).
    fn describe(&self, node: &Value, here: String) -> (FieldShape, Option<String>) {
        if let Some(r) = node.get("$ref").and_then(Value::as_str) {
            let name = r
                .trim_start_matches("#/definitions/")
                .trim_start_matches("#/components/schemas/")
                .to_string();
            let target = self.openapi.definition(&name);
            return match target.as_ref() {
                Some(t) if t.get("properties").is_some() => (FieldShape::Object, Some(name)),
                Some(t) if t.get("type").and_then(Value::as_str) == Some("object") => {
                    (FieldShape::Unknown, None)
                }
                Some(t) if t.get("type").is_some() => (FieldShape::Scalar, None),
                _ => (FieldShape::Unknown, None),
            };
        }
        if node.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            return (FieldShape::Scalar, None);
        }
        match node.get("type").and_then(Value::as_str) {
            Some("array") => (FieldShape::List, Some(format!("{here}/items"))),
            Some("object") if node.get("properties").is_some() => (FieldShape::Object, Some(here)),
            Some("object") if node.get("additionalProperties").is_some() => (
                FieldShape::Map,
                Some(format!("{here}/additionalProperties")),
            ),
            Some("object") | None => (FieldShape::Unknown, None),
            Some(_) => (FieldShape::Scalar, None),
        }
    }

    /// The type name for a node reached by `path` inside `parent`.
    fn child_name(parent: &str, path: &str) -> String {
        if parent.contains('#') {
            format!("{parent}{path}")
        } else {
            format!("{parent}#{path}")
        }
    }
}

impl SchemaLookup for DefinitionLookup {
    fn field(&self, type_name: &str, field: &str) -> Option<FieldInfo> {
        let node = self.node(type_name)?;
        let props = node.get("properties")?.as_object()?;
        let (key, prop) = props.iter().find(|(k, _)| *k == field)?;
        let here = Self::child_name(
            type_name,
            &format!("/properties/{}", key.replace('~', "~0").replace('/', "~1")),
        );
        let (shape, mut next) = self.describe(prop, here.clone());
        let mut info = FieldInfo::plain(shape);
        match shape {
            FieldShape::List => {
                let items = prop.get("items").cloned().unwrap_or(Value::Null);
                let (item_shape, item_type) = self.describe(&items, format!("{here}/items"));
                info.item_shape = Some(item_shape);
                next = item_type;
            }
            FieldShape::Map => {
                let vals = prop
                    .get("additionalProperties")
                    .cloned()
                    .unwrap_or(Value::Null);
                let (val_shape, val_type) =
                    self.describe(&vals, format!("{here}/additionalProperties"));
                info.item_shape = Some(val_shape);
                next = val_type;
            }
            _ => {}
        }
        info.type_name = next;
        // Markers in the schema itself (CRDs), then the generated table (built-ins).
        let ext = |k: &str| prop.get(k).and_then(Value::as_str).map(String::from);
        let mut strategy = ext("x-kubernetes-patch-strategy").unwrap_or_default();
        let mut merge_key = ext("x-kubernetes-patch-merge-key").unwrap_or_default();
        let mut list_type = ext("x-kubernetes-list-type").unwrap_or_default();
        let mut map_type = ext("x-kubernetes-map-type").unwrap_or_default();
        let mut map_keys: Vec<String> = prop
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        if let Some(r) = self.markers.get(&(type_name.to_string(), norm(field))) {
            strategy = r.2.to_string();
            merge_key = r.3.to_string();
            list_type = r.4.to_string();
            map_keys = r.5.iter().map(|s| s.to_string()).collect();
            map_type = r.6.to_string();
        }
        info.patch_strategy = strategy
            .split(',')
            .filter_map(|s| match s.trim() {
                "merge" => Some(PatchStrategy::Merge),
                "replace" => Some(PatchStrategy::Replace),
                "retainKeys" => Some(PatchStrategy::RetainKeys),
                _ => None,
            })
            .collect();
        info.patch_merge_key = (!merge_key.is_empty()).then_some(merge_key);
        info.list_type = match list_type.as_str() {
            "atomic" => Some(ListType::Atomic),
            "set" => Some(ListType::Set),
            "map" => Some(ListType::Map),
            _ => None,
        };
        info.list_map_keys = map_keys;
        info.map_type = match map_type.as_str() {
            "atomic" => Some(MapType::Atomic),
            "granular" => Some(MapType::Granular),
            _ => None,
        };
        Some(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_fields_carry_kubernetes_markers() {
        let l = DefinitionLookup::new(Arc::new(OpenApi::new()));
        let c = l.field("io.k8s.api.core.v1.PodSpec", "containers").unwrap();
        assert_eq!(c.shape, FieldShape::List);
        assert_eq!(c.patch_merge_key.as_deref(), Some("name"));
        assert_eq!(c.patch_strategy, vec![PatchStrategy::Merge]);
        assert_eq!(c.type_name.as_deref(), Some("io.k8s.api.core.v1.Container"));
        let p = l.field("io.k8s.api.core.v1.Container", "ports").unwrap();
        assert_eq!(p.list_map_keys, vec!["containerPort", "protocol"]);
        let f = l
            .field(
                "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
                "finalizers",
            )
            .unwrap();
        assert_eq!(f.list_type, Some(ListType::Set));
        let labels = l
            .field("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "labels")
            .unwrap();
        assert_eq!(labels.shape, FieldShape::Map);
        let spec = l.field("io.k8s.api.apps.v1.Deployment", "spec").unwrap();
        assert_eq!(spec.shape, FieldShape::Object);
        let replicas = l
            .field("io.k8s.api.apps.v1.DeploymentSpec", "replicas")
            .unwrap();
        assert_eq!(replicas.shape, FieldShape::Scalar);
        assert!(l
            .field("io.k8s.api.apps.v1.DeploymentSpec", "nope")
            .is_none());
    }

    #[test]
    fn crd_schemas_are_walked_inline() {
        let api = Arc::new(OpenApi::new());
        api.set_crds(&[serde_json::json!({"spec": {"group": "ex.com", "names": {"kind": "T"}, "versions": [{"name": "v1", "served": true,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
                "items": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["id"], "items": {"type": "object", "properties": {"id": {"type": "string"}}}}}}}}}}]}})]);
        let l = DefinitionLookup::new(api);
        let spec = l.field("com.ex.v1.T", "spec").unwrap();
        let items = l
            .field(spec.type_name.as_deref().unwrap(), "items")
            .unwrap();
        assert_eq!(items.list_type, Some(ListType::Map));
        assert_eq!(items.list_map_keys, vec!["id"]);
        let id = l.field(items.type_name.as_deref().unwrap(), "id").unwrap();
        assert_eq!(id.shape, FieldShape::Scalar);
        let meta = l.field("com.ex.v1.T", "metadata").unwrap();
        assert_eq!(
            meta.type_name.as_deref(),
            Some("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        );
    }
}
