//! `/openapi/v2` as protobuf: a Swagger 2.0 JSON document encoded as gnostic's `openapi.v2.Document`.
//!
//! kubectl up to 1.28 fetches the hub's schema with
//! `Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf` before validating
//! `apply`/`create`/`replace`/`edit`, and reads it with gnostic's generated Go types and
//! kube-openapi's `proto.NewOpenAPIData` (models and GVKs) and cli-runtime's query-parameter
//! verifier (which looks for `fieldValidation` among each PATCH operation's query parameters).
//! This module does what kube-openapi's `ToProtoBinary` does: walk the JSON document in order and
//! emit the same messages, free-form values (vendor extensions, `default`, `example`, `enum`) as
//! YAML text in `Any.yaml`.
//!
//! The message structs live in [`model`], generated from gnostic's `OpenAPIv2.proto` by
//! `tools/openapi-v2-codegen`; they can decode the output again (the tests do).

pub mod model;
mod reader;
mod schema;
mod security;
#[cfg(test)]
mod tests;

use prost::Message as _;
use serde_json::Value;

use self::model::{
    Definitions, Document, Examples, Headers, Info, NamedHeader, NamedParameter, NamedPathItem,
    NamedResponse, NamedResponseValue, Operation, ParameterDefinitions, PathItem, Paths, Response,
    ResponseDefinitions, ResponseValue, ResponseValueOneof, Responses, SchemaItem, SchemaItemOneof,
    Tag,
};
use self::reader::{named_anys, At};
use self::schema::{external_docs, header, named_schemas, parameter, parameters_item};
use self::security::{security_definitions, security_requirements};
use super::ProtoError;

/// The media types that ask for this encoding: kubectl sends the first (`@v1.0`), newer clients
/// the second. kube-openapi answers both with [`OPENAPI_V2_PROTOBUF_CONTENT_TYPE`].
pub const OPENAPI_V2_PROTOBUF_MEDIA_TYPES: [&str; 2] = [
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    OPENAPI_V2_PROTOBUF_CONTENT_TYPE,
];

/// The `Content-Type` of a protobuf `/openapi/v2` response.
pub const OPENAPI_V2_PROTOBUF_CONTENT_TYPE: &str =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// Encodes a Swagger 2.0 document as gnostic's `openapi.v2.Document` protobuf message.
///
/// Fails with [`ProtoError::ReadOpenApi`] naming the JSON path of the first value whose shape
/// Swagger 2.0 does not allow (a schema that is not an object, a `required` that is not a list of
/// strings, a parameter whose `in` is unknown, ...).
pub fn openapi_v2_to_protobuf(doc: &Value) -> Result<Vec<u8>, ProtoError> {
    Ok(document(doc)?.encode_to_vec())
}

/// The document as gnostic's message, for callers that want to inspect or cache it.
pub fn document(doc: &Value) -> Result<Document, ProtoError> {
    let at = At::new(doc, "#".to_owned())?;
    Ok(Document {
        swagger: at.string("swagger")?,
        info: at.child("info")?.map(|i| info(&i)).transpose()?,
        host: at.string("host")?,
        base_path: at.string("basePath")?,
        schemes: at.strings("schemes")?,
        consumes: at.strings("consumes")?,
        produces: at.strings("produces")?,
        paths: at.child("paths")?.map(|p| paths(&p)).transpose()?,
        definitions: at
            .child("definitions")?
            .map(|_| {
                Ok::<_, ProtoError>(Definitions {
                    additional_properties: named_schemas(&at, "definitions")?,
                })
            })
            .transpose()?,
        parameters: at
            .child("parameters")?
            .map(|_| parameter_definitions(&at))
            .transpose()?,
        responses: at
            .child("responses")?
            .map(|_| response_definitions(&at))
            .transpose()?,
        security: security_requirements(&at, "security")?,
        security_definitions: at
            .child("securityDefinitions")?
            .map(|_| security_definitions(&at))
            .transpose()?,
        tags: tags(&at)?,
        external_docs: at
            .child("externalDocs")?
            .map(|d| external_docs(&d))
            .transpose()?,
        vendor_extension: at.vendor_extensions(),
    })
}

fn info(at: &At<'_>) -> Result<Info, ProtoError> {
    Ok(Info {
        title: at.string("title")?,
        version: at.string("version")?,
        description: at.string("description")?,
        terms_of_service: at.string("termsOfService")?,
        contact: at
            .child("contact")?
            .map(|c| {
                Ok::<_, ProtoError>(model::Contact {
                    name: c.string("name")?,
                    url: c.string("url")?,
                    email: c.string("email")?,
                    vendor_extension: c.vendor_extensions(),
                })
            })
            .transpose()?,
        license: at
            .child("license")?
            .map(|l| {
                Ok::<_, ProtoError>(model::License {
                    name: l.string("name")?,
                    url: l.string("url")?,
                    vendor_extension: l.vendor_extensions(),
                })
            })
            .transpose()?,
        vendor_extension: at.vendor_extensions(),
    })
}

fn tags(at: &At<'_>) -> Result<Vec<Tag>, ProtoError> {
    list(at, "tags")?
        .iter()
        .map(|t| {
            Ok(Tag {
                name: t.string("name")?,
                description: t.string("description")?,
                external_docs: t
                    .child("externalDocs")?
                    .map(|d| external_docs(&d))
                    .transpose()?,
                vendor_extension: t.vendor_extensions(),
            })
        })
        .collect()
}

// === Paths and operations ===

fn paths(at: &At<'_>) -> Result<Paths, ProtoError> {
    let mut path = Vec::new();
    for (name, item) in at.map.iter().filter(|(key, _)| key.starts_with('/')) {
        path.push(NamedPathItem {
            name: name.clone(),
            value: Some(path_item(&At::new(item, at.sub(name))?)?),
        });
    }
    Ok(Paths {
        vendor_extension: at.vendor_extensions(),
        path,
    })
}

fn path_item(at: &At<'_>) -> Result<PathItem, ProtoError> {
    let op = |verb: &str| at.child(verb)?.map(|o| operation(&o)).transpose();
    Ok(PathItem {
        _ref: at.string("$ref")?,
        get: op("get")?,
        put: op("put")?,
        post: op("post")?,
        delete: op("delete")?,
        options: op("options")?,
        head: op("head")?,
        patch: op("patch")?,
        parameters: list(at, "parameters")?
            .iter()
            .map(parameters_item)
            .collect::<Result<_, _>>()?,
        vendor_extension: at.vendor_extensions(),
    })
}

fn operation(at: &At<'_>) -> Result<Operation, ProtoError> {
    Ok(Operation {
        tags: at.strings("tags")?,
        summary: at.string("summary")?,
        description: at.string("description")?,
        external_docs: at
            .child("externalDocs")?
            .map(|d| external_docs(&d))
            .transpose()?,
        operation_id: at.string("operationId")?,
        produces: at.strings("produces")?,
        consumes: at.strings("consumes")?,
        parameters: list(at, "parameters")?
            .iter()
            .map(parameters_item)
            .collect::<Result<_, _>>()?,
        responses: at.child("responses")?.map(|r| responses(&r)).transpose()?,
        schemes: at.strings("schemes")?,
        deprecated: at.boolean("deprecated")?,
        security: security_requirements(at, "security")?,
        vendor_extension: at.vendor_extensions(),
    })
}

fn parameter_definitions(doc: &At<'_>) -> Result<ParameterDefinitions, ProtoError> {
    Ok(ParameterDefinitions {
        additional_properties: doc.named("parameters", parameter, |name, value| {
            NamedParameter { name, value }
        })?,
    })
}

// === Responses ===

fn responses(at: &At<'_>) -> Result<Responses, ProtoError> {
    let mut response_code = Vec::new();
    for (code, value) in at.map.iter().filter(|(key, _)| !key.starts_with("x-")) {
        let value_at = At::new(value, at.sub(code))?;
        let oneof = if value_at.map.contains_key("$ref") {
            ResponseValueOneof::JsonReference(model::JsonReference {
                _ref: value_at.string("$ref")?,
                description: value_at.string("description")?,
            })
        } else {
            ResponseValueOneof::Response(response(&value_at)?)
        };
        response_code.push(NamedResponseValue {
            name: code.clone(),
            value: Some(ResponseValue { oneof: Some(oneof) }),
        });
    }
    Ok(Responses {
        response_code,
        vendor_extension: at.vendor_extensions(),
    })
}

fn response(at: &At<'_>) -> Result<Response, ProtoError> {
    let headers = at
        .child("headers")?
        .map(|_| {
            Ok::<_, ProtoError>(Headers {
                additional_properties: at
                    .named("headers", header, |name, value| NamedHeader { name, value })?,
            })
        })
        .transpose()?;
    Ok(Response {
        description: at.string("description")?,
        schema: at
            .child("schema")?
            .map(|s| {
                Ok::<_, ProtoError>(SchemaItem {
                    oneof: Some(SchemaItemOneof::Schema(schema::schema(&s)?)),
                })
            })
            .transpose()?,
        headers,
        examples: at.child("examples")?.map(|e| Examples {
            additional_properties: named_anys(e.map.iter()),
        }),
        vendor_extension: at.vendor_extensions(),
    })
}

fn response_definitions(doc: &At<'_>) -> Result<ResponseDefinitions, ProtoError> {
    Ok(ResponseDefinitions {
        additional_properties: doc.named("responses", response, |name, value| NamedResponse {
            name,
            value,
        })?,
    })
}

/// A list of objects under `key`; empty when absent.
fn list<'a>(at: &At<'a>, key: &str) -> Result<Vec<At<'a>>, ProtoError> {
    match at.map.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, item)| At::new(item, format!("{}/{i}", at.sub(key))))
            .collect(),
        Some(_) => Err(at.error(key, "expected a list")),
    }
}
