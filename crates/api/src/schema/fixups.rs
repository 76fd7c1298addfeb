//! Turning k8s-openapi's schemas into the ones kube-apiserver publishes.
//!
//! Three things differ: k8s-openapi drops the patch/list/map markers (we merge them back from
//! the generated k8s-pb table), it makes `metadata` required (Rust fields are not optional),
//! and a few special types are shaped for Rust rather than for OpenAPI. List kinds and
//! `x-kubernetes-group-version-kind` are added here too, since k8s-openapi has no list schemas.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use super::kinds::names;
use super::messages::{message_for_openapi, normalize};
use super::refs::ref_to;
use super::Gvk;

/// Merge `x-kubernetes-patch-strategy`, `-patch-merge-key`, `-list-type`, `-list-map-keys` and
/// `-map-type` into every definition the generated table knows. Extensions a definition
/// already has win.
pub(crate) fn apply_markers(defs: &mut Map<String, Value>) {
    for (name, def) in defs.iter_mut() {
        let Some(msg) = message_for_openapi(name) else {
            continue;
        };
        if msg.struct_type == "atomic" {
            insert_missing(def, "x-kubernetes-map-type", json!("atomic"));
        }
        let Some(props) = def.get_mut("properties").and_then(Value::as_object_mut) else {
            continue;
        };
        let by_norm: HashMap<String, String> =
            props.keys().map(|k| (normalize(k), k.clone())).collect();
        for f in msg.fields {
            let marked = !(f.patch_strategy.is_empty()
                && f.patch_merge_key.is_empty()
                && f.list_type.is_empty()
                && f.list_map_keys.is_empty()
                && f.map_type.is_empty());
            if !marked {
                continue;
            }
            let Some(prop) = by_norm
                .get(&normalize(f.rust))
                .and_then(|k| props.get_mut(k))
            else {
                continue;
            };
            if !f.patch_merge_key.is_empty() {
                insert_missing(
                    prop,
                    "x-kubernetes-patch-merge-key",
                    json!(f.patch_merge_key),
                );
            }
            if !f.patch_strategy.is_empty() {
                insert_missing(prop, "x-kubernetes-patch-strategy", json!(f.patch_strategy));
            }
            if !f.list_map_keys.is_empty() {
                insert_missing(prop, "x-kubernetes-list-map-keys", json!(f.list_map_keys));
            }
            if !f.list_type.is_empty() {
                insert_missing(prop, "x-kubernetes-list-type", json!(f.list_type));
            }
            if !f.map_type.is_empty() {
                insert_missing(prop, "x-kubernetes-map-type", json!(f.map_type));
            }
        }
    }
}

fn insert_missing(node: &mut Value, key: &str, value: Value) {
    if let Some(obj) = node.as_object_mut() {
        obj.entry(key.to_owned()).or_insert(value);
    }
}

/// Correct k8s-openapi's Rust-shaped schemas to what Kubernetes publishes.
pub(crate) fn correct_k8s_openapi(defs: &mut Map<String, Value>) {
    for (name, def) in defs.iter_mut() {
        let Some(obj) = def.as_object_mut() else {
            continue;
        };
        // `metadata` is optional on the wire (kube-apiserver never lists it as required).
        if let Some(required) = obj.get_mut("required").and_then(Value::as_array_mut) {
            required.retain(|r| r != "metadata");
            if required.is_empty() {
                obj.remove("required");
            }
        }
        // apiextensions JSON holds any JSON value, not just objects.
        if name == names::JSON {
            obj.remove("type");
        }
        // JSONSchemaPropsOrBool/-OrArray/-OrStringArray are published without a structure:
        // OpenAPI v2 has no `oneOf`, and kubectl rejects definitions it cannot parse.
        if name.starts_with(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOr",
        ) {
            obj.remove("oneOf");
        }
    }
}

/// The `<Kind>List` definition of a kind, shaped like kube-apiserver's.
pub(crate) fn list_definition(
    item_name: &str,
    item_def: &Value,
    list_gvk: &Gvk,
    plural: &str,
) -> Value {
    let item_kind = list_gvk.kind.strip_suffix("List").unwrap_or(&list_gvk.kind);
    let type_meta = |field: &str| {
        item_def
            .pointer(&format!("/properties/{field}"))
            .cloned()
            .unwrap_or_else(|| json!({ "type": "string" }))
    };
    json!({
        "description": format!("{} is a list of {item_kind} objects.", list_gvk.kind),
        "type": "object",
        "properties": {
            "apiVersion": type_meta("apiVersion"),
            "items": {
                "description": format!("List of {plural}."),
                "type": "array",
                "items": { "$ref": ref_to(item_name) },
            },
            "kind": type_meta("kind"),
            "metadata": {
                "description": "Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
                "$ref": ref_to(names::LIST_META),
            },
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": [list_gvk.to_json()],
    })
}

/// Add `gvk` to a definition's `x-kubernetes-group-version-kind` (kept sorted, no duplicates).
pub(crate) fn add_gvk(def: &mut Value, gvk: &Gvk) {
    let Some(obj) = def.as_object_mut() else {
        return;
    };
    let entry = obj
        .entry("x-kubernetes-group-version-kind")
        .or_insert_with(|| json!([]));
    if let Some(list) = entry.as_array_mut() {
        let new = gvk.to_json();
        if !list.contains(&new) {
            list.push(new);
            list.sort_by_key(|g| {
                (
                    g["group"].to_string(),
                    g["version"].to_string(),
                    g["kind"].to_string(),
                )
            });
        }
    }
}

/// Replace a definition's `x-kubernetes-group-version-kind` with `gvks`.
pub(crate) fn set_gvks<'a>(def: &mut Value, gvks: impl IntoIterator<Item = &'a Gvk>) {
    if let Some(obj) = def.as_object_mut() {
        let list: Vec<Value> = gvks.into_iter().map(Gvk::to_json).collect();
        obj.insert(
            "x-kubernetes-group-version-kind".to_owned(),
            Value::Array(list),
        );
    }
}
