//! `/openapi/v3`: an index of group-versions and one OpenAPI 3.0 document per group-version.
//!
//! kubectl reads these for `explain` (it finds the GVK on a GET/POST/... operation of the
//! resource's path, then the schema whose `x-kubernetes-group-version-kind` contains it), for
//! client-side strategic merge patches (`x-kubernetes-patch-*` on properties, following
//! `$ref`/`allOf`) and to learn that the server validates fields (a `fieldValidation` query
//! parameter on the PATCH operation). Each document holds only the schemas its paths reach.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::fixups::set_gvks;
use super::kinds::names;
use super::paths::{gv_root, resource_paths, response_description, Dialect, Op, Param};
use super::refs::{closure, Defs, V2_PREFIX, V3_PREFIX};
use super::set::Served;
use super::{gv_path, Document};

/// The index and every group-version document.
#[derive(Clone, Debug)]
pub(crate) struct V3Documents {
    pub index: Document,
    /// Keyed by `api/v1`, `apis/<group>/<version>`.
    pub by_gv: BTreeMap<String, Document>,
}

/// Render the index and all group-version documents.
pub(crate) fn documents(served: &Served<'_>) -> V3Documents {
    let mut by_gv = BTreeMap::new();
    for (group, version) in &served.gvs {
        by_gv.insert(gv_path(group, version), gv_document(served, group, version));
    }
    let paths: Map<String, Value> = by_gv
        .iter()
        .map(|(gv, doc)| {
            (
                gv.clone(),
                json!({ "serverRelativeURL": format!("/openapi/v3/{gv}?hash={}", doc.hash) }),
            )
        })
        .collect();
    V3Documents {
        index: Document::from_value(&json!({ "paths": paths })),
        by_gv,
    }
}

fn gv_document(served: &Served<'_>, group: &str, version: &str) -> Document {
    let mut items = vec![gv_root(group, version)];
    let mut roots: Vec<String> = vec![names::STATUS.to_owned(), names::DELETE_OPTIONS.to_owned()];
    for r in served
        .resources
        .iter()
        .filter(|r| r.gvk.group == group && r.gvk.version == version)
    {
        roots.push(r.def.clone());
        roots.push(r.list_def.clone());
        items.extend(resource_paths(r));
    }
    let mut paths = Map::new();
    for item in &items {
        for op in &item.ops {
            roots.push(op.response.clone());
            roots.extend(op.body.iter().map(|b| b.def.clone()));
        }
        paths.insert(item.path.clone(), item.to_openapi(&V3));
    }

    let mut schemas = Map::new();
    for name in closure(served, roots.iter().map(String::as_str)) {
        if let Some(def) = served.def(&name) {
            schemas.insert(name.clone(), schema(served, &name, def));
        }
    }
    Document::from_value(&json!({
        "openapi": "3.0.0",
        "info": { "title": "Kubernetes", "version": crate::KUBERNETES_VERSION },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {
                "BearerToken": { "type": "apiKey", "description": "Bearer Token authentication", "name": "authorization", "in": "header" },
            },
        },
        "security": [{ "BearerToken": [] }],
    }))
}

/// A definition as OpenAPI v3 publishes it.
fn schema(served: &Served<'_>, name: &str, def: &Value) -> Value {
    let mut def = def.clone();
    if let Some(obj) = def.as_object_mut() {
        match name {
            names::INT_OR_STRING => {
                obj.insert(
                    "oneOf".to_owned(),
                    json!([{ "type": "integer" }, { "type": "string" }]),
                );
            }
            names::QUANTITY => {
                obj.insert(
                    "oneOf".to_owned(),
                    json!([{ "type": "string" }, { "type": "number" }]),
                );
            }
            _ => {}
        }
    }
    if let Some((kind, _)) = served
        .catalog
        .every_gv_types()
        .iter()
        .find(|(_, n)| n == name)
    {
        set_gvks(&mut def, &served.gvks_of(kind));
    }
    super::refs::walk_mut(&mut def, &mut to_v3_ref);
    def
}

/// `#/definitions/X` → `#/components/schemas/X`; a reference with siblings (a description)
/// goes into a one-element `allOf`, since OpenAPI 3.0 ignores siblings of `$ref`.
fn to_v3_ref(node: &mut Value) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    let Some(target) = obj
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix(V2_PREFIX))
    else {
        return;
    };
    let reference = json!({ "$ref": format!("{V3_PREFIX}{target}") });
    if obj.len() == 1 {
        *node = reference;
    } else {
        obj.remove("$ref");
        obj.insert("allOf".to_owned(), json!([reference]));
    }
}

fn v3_ref(def: &str) -> Value {
    json!({ "$ref": format!("{V3_PREFIX}{def}") })
}

/// How this version writes operations and parameters.
const V3: Dialect = Dialect {
    operation,
    path_param,
    query_param,
};

fn path_param(name: &str, description: &str) -> Value {
    json!({ "name": name, "in": "path", "description": description, "required": true, "schema": { "type": "string", "uniqueItems": true } })
}

fn query_param((name, ty, description): Param) -> Value {
    json!({ "name": name, "in": "query", "description": description, "schema": { "type": ty, "uniqueItems": true } })
}

fn operation(op: &Op) -> Value {
    let mut out = json!({
        "tags": [op.tag],
        "description": op.description,
        "operationId": op.operation_id,
    });
    let Some(obj) = out.as_object_mut() else {
        return out;
    };
    // No empty list, as kube-apiserver writes it: clients' OpenAPI types drop an empty
    // `parameters` on the way back, and the upstream round-trip spec compares the two.
    let params: Vec<Value> = op.action.params().iter().map(|p| query_param(*p)).collect();
    if !params.is_empty() {
        obj.insert("parameters".to_owned(), Value::Array(params));
    }
    if let Some(body) = &op.body {
        let content: Map<String, Value> = op
            .consumes
            .iter()
            .map(|ct| ((*ct).to_owned(), json!({ "schema": v3_ref(&body.def) })))
            .collect();
        obj.insert(
            "requestBody".to_owned(),
            json!({ "content": content, "required": body.required }),
        );
    }
    let mut responses = Map::new();
    for code in op.action.status_codes() {
        let description = response_description(code);
        let content: Map<String, Value> = op
            .produces
            .iter()
            .map(|ct| ((*ct).to_owned(), json!({ "schema": v3_ref(&op.response) })))
            .collect();
        responses.insert(
            (*code).to_owned(),
            json!({ "description": description, "content": content }),
        );
    }
    responses.insert("401".to_owned(), json!({ "description": "Unauthorized" }));
    obj.insert("responses".to_owned(), Value::Object(responses));
    obj.insert(
        "x-kubernetes-action".to_owned(),
        json!(op.action.k8s_action()),
    );
    if let Some(gvk) = &op.gvk {
        obj.insert("x-kubernetes-group-version-kind".to_owned(), gvk.to_json());
    }
    out
}
