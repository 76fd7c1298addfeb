//! `/openapi/v2`: one Swagger 2.0 document with every definition and path.
//!
//! kubectl (and Helm, which validates through kubectl's code) parses every definition of this
//! document into its validation models, so nothing here may use what Swagger 2.0 lacks:
//! `oneOf`/`anyOf`/`allOf`/`not`, `nullable`, arrays without `items`. Custom resource schemas
//! are lowered the way kube-apiserver lowers them; built-in special types get the `type` and
//! `format` Kubernetes publishes.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::crd::CrdSchemas;
use super::fixups::set_gvks;
use super::kinds::names;
use super::paths::{gv_root, resource_paths, response_description, Dialect, Op, Param};
use super::refs::{ref_to, walk_mut};
use super::set::Served;
use super::Document;

/// Render the whole document.
pub(crate) fn document(served: &Served<'_>) -> Document {
    let mut definitions: BTreeMap<String, Value> = BTreeMap::new();
    for (name, def) in served.catalog.definitions() {
        definitions.insert(name.clone(), builtin_def(name, def));
    }
    for (kind, name) in served.catalog.every_gv_types() {
        if let Some(def) = definitions.get_mut(name) {
            set_gvks(def, &served.gvks_of(kind));
        }
    }
    for crd in &served.crds {
        for v in &crd.versions {
            definitions.insert(v.definition_name.clone(), crd_def(crd, &v.definition));
            definitions.insert(v.list_definition_name.clone(), v.list_definition.clone());
        }
    }

    let mut paths: BTreeMap<String, Value> = BTreeMap::new();
    for (group, version) in &served.gvs {
        let item = gv_root(group, version);
        paths.insert(item.path.clone(), item.to_openapi(&V2));
    }
    for r in &served.resources {
        for item in resource_paths(r) {
            paths.insert(item.path.clone(), item.to_openapi(&V2));
        }
    }

    Document::from_value(&json!({
        "swagger": "2.0",
        "info": { "title": "Kubernetes", "version": crate::KUBERNETES_VERSION },
        "paths": paths,
        "definitions": definitions,
        "securityDefinitions": {
            "BearerToken": { "description": "Bearer Token authentication", "type": "apiKey", "name": "authorization", "in": "header" },
        },
        "security": [{ "BearerToken": [] }],
    }))
}

/// A built-in definition as v2 publishes it.
fn builtin_def(name: &str, def: &Value) -> Value {
    let mut def = def.clone();
    if let Some(obj) = def.as_object_mut() {
        match name {
            names::INT_OR_STRING => {
                obj.insert("type".to_owned(), json!("string"));
                obj.insert("format".to_owned(), json!("int-or-string"));
            }
            names::QUANTITY => {
                obj.insert("type".to_owned(), json!("string"));
            }
            _ => {}
        }
    }
    def
}

/// A custom resource definition lowered to what kubectl's v2 models can parse.
fn crd_def(crd: &CrdSchemas, def: &Value) -> Value {
    let gvk = def
        .get("x-kubernetes-group-version-kind")
        .cloned()
        .unwrap_or_else(|| json!([]));
    let root_opaque = def
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if crd.preserve_unknown_fields || root_opaque {
        // Anything more and kubectl would reject fields the server accepts.
        return json!({ "type": "object", "x-kubernetes-group-version-kind": gvk });
    }
    let mut def = def.clone();
    walk_mut(&mut def, &mut lower_to_v2);
    def
}

fn lower_to_v2(node: &mut Value) {
    let Some(obj) = node.as_object_mut() else {
        return;
    };
    for k in ["allOf", "oneOf", "anyOf", "not"] {
        obj.remove(k);
    }
    let flag = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_bool).unwrap_or(false);
    // A property that may be null can't be required, and kubectl can't model null at all.
    let nullable_props: Vec<String> = obj
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, s)| flag_of(s, "nullable"))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    let nullable_values = obj
        .get("additionalProperties")
        .is_some_and(|a| flag_of(a, "nullable"));
    if let Some(required) = obj.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| {
            r.as_str()
                .is_some_and(|r| !nullable_props.iter().any(|n| n == r))
        });
        if nullable_values {
            required.clear();
        }
    }
    if obj
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        obj.remove("required");
    }
    if obj
        .remove("nullable")
        .and_then(|n| n.as_bool())
        .unwrap_or(false)
    {
        obj.remove("type");
        obj.remove("items");
        obj.remove("properties");
    }
    let preserve = flag(obj, "x-kubernetes-preserve-unknown-fields");
    if preserve {
        // kubectl would reject unknown fields if properties were listed.
        obj.remove("items");
        obj.remove("properties");
    }
    let ty = obj.get("type").and_then(Value::as_str).map(str::to_owned);
    if (ty.as_deref() == Some("array") && !obj.contains_key("items"))
        || (preserve && ty.as_deref() == Some("object"))
    {
        obj.remove("type");
    }
}

fn flag_of(v: &Value, k: &str) -> bool {
    v.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// How this version writes operations and parameters.
const V2: Dialect = Dialect {
    operation,
    path_param,
    query_param,
};

fn path_param(name: &str, description: &str) -> Value {
    json!({ "uniqueItems": true, "type": "string", "description": description, "name": name, "in": "path", "required": true })
}

fn query_param((name, ty, description): Param) -> Value {
    json!({ "uniqueItems": true, "type": ty, "description": description, "name": name, "in": "query" })
}

fn operation(op: &Op) -> Value {
    let mut params = Vec::new();
    if let Some(body) = &op.body {
        params.push(json!({ "name": "body", "in": "body", "required": body.required, "schema": { "$ref": ref_to(&body.def) } }));
    }
    params.extend(op.action.params().iter().map(|p| query_param(*p)));
    let mut responses = Map::new();
    for code in op.action.status_codes() {
        let description = response_description(code);
        responses.insert(
            (*code).to_owned(),
            json!({ "description": description, "schema": { "$ref": ref_to(&op.response) } }),
        );
    }
    responses.insert("401".to_owned(), json!({ "description": "Unauthorized" }));
    let mut out = json!({
        "description": op.description,
        "consumes": op.consumes,
        "produces": op.produces,
        "schemes": ["https"],
        "tags": [op.tag],
        "operationId": op.operation_id,
        "parameters": params,
        "responses": responses,
        "x-kubernetes-action": op.action.k8s_action(),
    });
    if let Some(obj) = out.as_object_mut() {
        // No empty list, as kube-apiserver writes it (clients' OpenAPI types drop it).
        if obj["parameters"].as_array().is_some_and(Vec::is_empty) {
            obj.remove("parameters");
        }
        if let Some(gvk) = &op.gvk {
            obj.insert("x-kubernetes-group-version-kind".to_owned(), gvk.to_json());
        }
    }
    out
}
