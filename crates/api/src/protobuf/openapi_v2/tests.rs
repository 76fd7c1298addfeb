//! Round trips: encode a Kubernetes-shaped Swagger document, decode the bytes with the same
//! message structs, and check the facts kubectl relies on.

use prost::Message as _;
use serde_json::json;

use super::model::{
    AdditionalPropertiesItemOneof as AdditionalProperties, Document, NonBodyParameterOneof,
    ParameterOneof, ParametersItemOneof, ResponseValueOneof, Schema, SchemaItemOneof,
    SecurityDefinitionsItemOneof as SecurityScheme,
};
use super::openapi_v2_to_protobuf;
use crate::protobuf::ProtoError;

fn sample() -> serde_json::Value {
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.33.0"},
        "paths": {
            "/apis/apps/v1/namespaces/{namespace}/deployments/{name}": {
                "patch": {
                    "consumes": ["application/json-patch+json", "application/merge-patch+json"],
                    "operationId": "patchAppsV1NamespacedDeployment",
                    "parameters": [
                        {"$ref": "#/parameters/body-78PwaGsr"},
                        {"in": "query", "name": "fieldValidation", "type": "string", "uniqueItems": true},
                        {"in": "query", "name": "force", "type": "boolean"}
                    ],
                    "responses": {
                        "200": {"description": "OK", "schema": {"$ref": "#/definitions/io.k8s.api.apps.v1.Deployment"}},
                        "401": {"description": "Unauthorized"}
                    },
                    "x-kubernetes-action": "patch",
                    "x-kubernetes-group-version-kind": {"group": "apps", "kind": "Deployment", "version": "v1"}
                },
                "parameters": [
                    {"description": "name of the Deployment", "in": "path", "name": "name", "required": true, "type": "string", "uniqueItems": true}
                ]
            }
        },
        "definitions": {
            "io.k8s.api.apps.v1.Deployment": {
                "description": "Deployment enables declarative updates for Pods and ReplicaSets.",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "metadata": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "default": {}},
                    "spec": {"$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"}
                },
                "type": "object",
                "x-kubernetes-group-version-kind": [{"group": "apps", "kind": "Deployment", "version": "v1"}]
            },
            "io.k8s.api.core.v1.Container": {
                "properties": {
                    "ports": {
                        "items": {"$ref": "#/definitions/io.k8s.api.core.v1.ContainerPort"},
                        "type": "array",
                        "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-patch-merge-key": "containerPort",
                        "x-kubernetes-patch-strategy": "merge"
                    },
                    "imagePullPolicy": {"type": "string", "enum": ["Always", "IfNotPresent", "Never"]},
                    "resources": {"type": "object", "additionalProperties": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.api.resource.Quantity"}},
                    "anything": {"type": "object", "additionalProperties": true},
                    "maxSkew": {"type": "integer", "format": "int32", "minimum": 1, "maxLength": 5}
                },
                "required": ["name"],
                "type": "object"
            }
        },
        "parameters": {
            "body-78PwaGsr": {"in": "body", "name": "body", "required": true, "schema": {"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
        },
        "securityDefinitions": {
            "BearerToken": {"description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey"}
        },
        "security": [{"BearerToken": []}]
    })
}

fn decode(doc: &serde_json::Value) -> Document {
    let bytes = openapi_v2_to_protobuf(doc).expect("encodes");
    Document::decode(bytes.as_slice()).expect("decodes")
}

fn definition<'a>(doc: &'a Document, name: &str) -> &'a Schema {
    let defs = doc.definitions.as_ref().expect("definitions");
    let entry = defs.additional_properties.iter().find(|d| d.name == name);
    entry
        .and_then(|d| d.value.as_ref())
        .expect("definition present")
}

fn property<'a>(schema: &'a Schema, name: &str) -> &'a Schema {
    let props = schema.properties.as_ref().expect("properties");
    let entry = props.additional_properties.iter().find(|p| p.name == name);
    entry
        .and_then(|p| p.value.as_ref())
        .expect("property present")
}

fn extension(ext: &[super::model::NamedAny], name: &str) -> String {
    let found = ext
        .iter()
        .find(|e| e.name == name)
        .expect("extension present");
    found
        .value
        .as_ref()
        .map(|v| v.yaml.clone())
        .unwrap_or_default()
}

#[test]
fn document_header_and_security() {
    let doc = decode(&sample());
    assert_eq!(doc.swagger, "2.0");
    assert_eq!(
        doc.info.as_ref().map(|i| i.version.as_str()),
        Some("v1.33.0")
    );
    let security = &doc.security[0].additional_properties[0];
    assert_eq!(security.name, "BearerToken");
    let defs = doc.security_definitions.expect("security definitions");
    match defs.additional_properties[0]
        .value
        .as_ref()
        .and_then(|v| v.oneof.as_ref())
    {
        Some(SecurityScheme::ApiKeySecurity(key)) => {
            assert_eq!(
                (key.name.as_str(), key.r#in.as_str()),
                ("authorization", "header")
            );
        }
        other => panic!("expected an apiKey scheme, got {other:?}"),
    }
}

#[test]
fn definitions_keep_order_refs_types_and_extensions() {
    let doc = decode(&sample());
    let names: Vec<_> = doc
        .definitions
        .as_ref()
        .expect("defs")
        .additional_properties
        .iter()
        .map(|d| d.name.clone())
        .collect();
    assert_eq!(
        names,
        [
            "io.k8s.api.apps.v1.Deployment",
            "io.k8s.api.core.v1.Container"
        ]
    );

    let deployment = definition(&doc, "io.k8s.api.apps.v1.Deployment");
    assert_eq!(
        deployment.r#type.as_ref().map(|t| t.value.clone()),
        Some(vec!["object".to_owned()])
    );
    assert_eq!(
        extension(
            &deployment.vendor_extension,
            "x-kubernetes-group-version-kind"
        ),
        "- group: apps\n  kind: Deployment\n  version: v1\n"
    );
    let metadata = property(deployment, "metadata");
    assert_eq!(
        metadata._ref,
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert_eq!(
        metadata.default.as_ref().map(|a| a.yaml.as_str()),
        Some("{}\n")
    );

    let container = definition(&doc, "io.k8s.api.core.v1.Container");
    assert_eq!(container.required, ["name"]);
    let ports = property(container, "ports");
    let items = ports.items.as_ref().expect("items");
    assert_eq!(
        items.schema[0]._ref,
        "#/definitions/io.k8s.api.core.v1.ContainerPort"
    );
    assert_eq!(
        extension(&ports.vendor_extension, "x-kubernetes-list-map-keys"),
        "- containerPort\n- protocol\n"
    );
    assert_eq!(
        extension(&ports.vendor_extension, "x-kubernetes-patch-strategy"),
        "merge\n"
    );
    let policy = property(container, "imagePullPolicy");
    let members: Vec<_> = policy.r#enum.iter().map(|a| a.yaml.as_str()).collect();
    assert_eq!(members, ["Always\n", "IfNotPresent\n", "Never\n"]);
    match property(container, "resources")
        .additional_properties
        .as_ref()
        .and_then(|a| a.oneof.as_ref())
    {
        Some(AdditionalProperties::Schema(s)) => assert!(s._ref.ends_with("resource.Quantity")),
        other => panic!("expected a schema, got {other:?}"),
    }
    let anything = property(container, "anything")
        .additional_properties
        .as_ref();
    assert_eq!(
        anything.and_then(|a| a.oneof.clone()),
        Some(AdditionalProperties::Boolean(true))
    );
    let skew = property(container, "maxSkew");
    assert_eq!(
        (skew.format.as_str(), skew.minimum, skew.max_length),
        ("int32", 1.0, 5)
    );
}

#[test]
fn paths_carry_parameters_responses_and_gvk() {
    let doc = decode(&sample());
    let paths = doc.paths.expect("paths");
    let item = paths.path[0].value.as_ref().expect("path item");
    let patch = item.patch.as_ref().expect("patch operation");
    assert_eq!(
        extension(&patch.vendor_extension, "x-kubernetes-group-version-kind"),
        "group: apps\nkind: Deployment\nversion: v1\n"
    );

    // cli-runtime's query-parameter verifier looks exactly here.
    let query_names: Vec<_> = patch
        .parameters
        .iter()
        .filter_map(|p| match p.oneof.as_ref()? {
            ParametersItemOneof::Parameter(p) => match p.oneof.as_ref()? {
                ParameterOneof::NonBodyParameter(nb) => match nb.oneof.as_ref()? {
                    NonBodyParameterOneof::QueryParameterSubSchema(q) => Some(q.name.clone()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(query_names, ["fieldValidation", "force"]);
    match patch.parameters[0].oneof.as_ref() {
        Some(ParametersItemOneof::JsonReference(r)) => {
            assert_eq!(r._ref, "#/parameters/body-78PwaGsr")
        }
        other => panic!("expected a $ref parameter, got {other:?}"),
    }
    match item.parameters[0].oneof.as_ref() {
        Some(ParametersItemOneof::Parameter(p)) => match p.oneof.as_ref() {
            Some(ParameterOneof::NonBodyParameter(nb)) => match nb.oneof.as_ref() {
                Some(NonBodyParameterOneof::PathParameterSubSchema(path)) => {
                    assert!(path.required && path.unique_items);
                    assert_eq!(path.name, "name");
                }
                other => panic!("expected a path parameter, got {other:?}"),
            },
            other => panic!("expected a non-body parameter, got {other:?}"),
        },
        other => panic!("expected an inline parameter, got {other:?}"),
    }
    let responses = patch.responses.as_ref().expect("responses");
    let codes: Vec<_> = responses
        .response_code
        .iter()
        .map(|r| r.name.as_str())
        .collect();
    assert_eq!(codes, ["200", "401"]);
    match responses.response_code[0]
        .value
        .as_ref()
        .and_then(|v| v.oneof.as_ref())
    {
        Some(ResponseValueOneof::Response(r)) => {
            let schema = r
                .schema
                .as_ref()
                .and_then(|s| match s.oneof.as_ref() {
                    Some(SchemaItemOneof::Schema(s)) => Some(s),
                    _ => None,
                })
                .expect("schema");
            assert!(schema._ref.ends_with("apps.v1.Deployment"));
        }
        other => panic!("expected a response, got {other:?}"),
    }
    let body = doc.parameters.expect("parameter definitions");
    match body.additional_properties[0]
        .value
        .as_ref()
        .and_then(|p| p.oneof.as_ref())
    {
        Some(ParameterOneof::BodyParameter(b)) => assert!(b.required && b.schema.is_some()),
        other => panic!("expected a body parameter, got {other:?}"),
    }
}

#[test]
fn malformed_documents_name_the_path() {
    let cases = [
        (json!([]), "#"),
        (
            json!({"definitions": {"A": {"required": "name"}}}),
            "#/definitions/A/required",
        ),
        (
            json!({"definitions": {"A": {"properties": {"b": 3}}}}),
            "#/definitions/A/properties/b",
        ),
        (
            json!({"paths": {"/x": {"get": {"parameters": [{"in": "cookie", "name": "c"}]}}}}),
            "#/paths/~1x/get/parameters/0/in",
        ),
    ];
    for (doc, want) in cases {
        match openapi_v2_to_protobuf(&doc) {
            Err(ProtoError::ReadOpenApi { path, .. }) => assert_eq!(path, want, "for {doc}"),
            other => panic!("expected an error at {want}, got {other:?}"),
        }
    }
}

/// The generator of `model.rs`, compiled here so the test below can run it.
#[path = "../../../../../tools/openapi-v2-codegen/src/generate.rs"]
mod codegen;

/// `model.rs` is what `tools/openapi-v2-codegen` makes of its copy of `OpenAPIv2.proto`: neither
/// was edited by hand since the last run.
#[test]
fn model_is_generated() {
    let proto = include_str!("../../../../../tools/openapi-v2-codegen/OpenAPIv2.proto");
    let generated = codegen::generate(proto).expect("the proto copy parses");
    assert!(
        generated == include_str!("model.rs"),
        "crates/api/src/protobuf/openapi_v2/model.rs is stale: run \
         `cargo run --manifest-path tools/openapi-v2-codegen/Cargo.toml`"
    );
}
