//! Swagger schemas and parameters to gnostic messages.

use serde_json::Value;

use super::model::{
    AdditionalPropertiesItem, AdditionalPropertiesItemOneof as AdditionalProperties, Any,
    BodyParameter, ExternalDocs, FormDataParameterSubSchema, Header, HeaderParameterSubSchema,
    ItemsItem, JsonReference, NamedAny, NamedSchema, NonBodyParameter, NonBodyParameterOneof,
    Parameter, ParameterOneof, ParametersItem, ParametersItemOneof, PathParameterSubSchema,
    PrimitivesItems, Properties, QueryParameterSubSchema, Schema, TypeItem, Xml,
};
use super::reader::At;
use crate::protobuf::ProtoError;

/// A `$ty` literal of the given fields and the [`Keywords`] `$keywords` (evaluated first).
macro_rules! with_keywords {
    ($keywords:expr, $ty:ident { $($field:ident $(: $value:expr)?),* $(,)? }) => {{
        let k: Keywords = $keywords;
        $ty {
            $($field $(: $value)?,)*
            default: k.default,
            maximum: k.maximum,
            exclusive_maximum: k.exclusive_maximum,
            minimum: k.minimum,
            exclusive_minimum: k.exclusive_minimum,
            max_length: k.max_length,
            min_length: k.min_length,
            pattern: k.pattern,
            max_items: k.max_items,
            min_items: k.min_items,
            unique_items: k.unique_items,
            r#enum: k.r#enum,
            multiple_of: k.multiple_of,
        }
    }};
}

/// A `$ty` literal of the given fields and the [`Primitive`] `$primitive` (evaluated first);
/// `items` is boxed where `$ty` nests (`PrimitivesItems`).
macro_rules! primitive {
    ($primitive:expr, $ty:ident { $($field:ident: $value:expr),* $(,)? }) => {{
        let p: Primitive = $primitive;
        with_keywords!(p.keywords, $ty {
            $($field: $value,)*
            r#type: p.r#type,
            format: p.format,
            items: p.items.map(Into::into),
            collection_format: p.collection_format,
            vendor_extension: p.vendor_extension,
        })
    }};
}

/// A Schema Object (`definitions`, `properties`, `items`, body parameters, responses).
pub(super) fn schema(at: &At<'_>) -> Result<Schema, ProtoError> {
    let additional_properties = match at.map.get("additionalProperties") {
        None => None,
        Some(Value::Bool(b)) => Some(AdditionalProperties::Boolean(*b)),
        Some(value) => Some(AdditionalProperties::Schema(Box::new(schema(&At::new(
            value,
            at.sub("additionalProperties"),
        )?)?))),
    };
    let items = match at.map.get("items") {
        None => None,
        Some(Value::Array(list)) => Some(ItemsItem {
            schema: list
                .iter()
                .enumerate()
                .map(|(i, item)| schema(&At::new(item, format!("{}/{i}", at.sub("items")))?))
                .collect::<Result<_, _>>()?,
        }),
        Some(value) => Some(ItemsItem {
            schema: vec![schema(&At::new(value, at.sub("items"))?)?],
        }),
    };
    let all_of = match at.map.get("allOf") {
        None => Vec::new(),
        Some(Value::Array(list)) => list
            .iter()
            .enumerate()
            .map(|(i, item)| schema(&At::new(item, format!("{}/{i}", at.sub("allOf")))?))
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(at.error("allOf", "expected a list of schemas")),
    };
    let properties = match at.child("properties")? {
        None => None,
        Some(_) => Some(Properties {
            additional_properties: named_schemas(at, "properties")?,
        }),
    };
    let types = at.types("type")?;
    Ok(with_keywords!(
        Keywords::read(at)?,
        Schema {
            _ref: at.string("$ref")?,
            format: at.string("format")?,
            title: at.string("title")?,
            description: at.string("description")?,
            max_properties: at.integer("maxProperties")?,
            min_properties: at.integer("minProperties")?,
            required: at.strings("required")?,
            additional_properties: additional_properties
                .map(|oneof| Box::new(AdditionalPropertiesItem { oneof: Some(oneof) })),
            r#type: (!types.is_empty()).then_some(TypeItem { value: types }),
            items,
            all_of,
            properties,
            discriminator: at.string("discriminator")?,
            read_only: at.boolean("readOnly")?,
            xml: at.child("xml")?.map(|x| xml(&x)).transpose()?,
            external_docs: at
                .child("externalDocs")?
                .map(|d| external_docs(&d))
                .transpose()?,
            example: at.any("example"),
            vendor_extension: at.vendor_extensions(),
        }
    ))
}

/// A map of schemas (`definitions`, `properties`), in document order.
pub(super) fn named_schemas(at: &At<'_>, key: &str) -> Result<Vec<NamedSchema>, ProtoError> {
    at.named(key, schema, |name, value| NamedSchema { name, value })
}

pub(super) fn external_docs(at: &At<'_>) -> Result<ExternalDocs, ProtoError> {
    Ok(ExternalDocs {
        description: at.string("description")?,
        url: at.string("url")?,
        vendor_extension: at.vendor_extensions(),
    })
}

fn xml(at: &At<'_>) -> Result<Xml, ProtoError> {
    Ok(Xml {
        name: at.string("name")?,
        namespace: at.string("namespace")?,
        prefix: at.string("prefix")?,
        attribute: at.boolean("attribute")?,
        wrapped: at.boolean("wrapped")?,
        vendor_extension: at.vendor_extensions(),
    })
}

// === Parameters ===

/// An entry of a `parameters` list: a `$ref` or a parameter.
pub(super) fn parameters_item(at: &At<'_>) -> Result<ParametersItem, ProtoError> {
    let oneof = if at.map.contains_key("$ref") {
        ParametersItemOneof::JsonReference(JsonReference {
            _ref: at.string("$ref")?,
            description: at.string("description")?,
        })
    } else {
        ParametersItemOneof::Parameter(parameter(at)?)
    };
    Ok(ParametersItem { oneof: Some(oneof) })
}

/// A Parameter Object; `in` decides which of gnostic's five shapes it takes.
pub(super) fn parameter(at: &At<'_>) -> Result<Parameter, ProtoError> {
    let location = at.string("in")?;
    if location == "body" {
        let body = BodyParameter {
            description: at.string("description")?,
            name: at.string("name")?,
            r#in: location,
            required: at.boolean("required")?,
            schema: at.child("schema")?.map(|s| schema(&s)).transpose()?,
            vendor_extension: at.vendor_extensions(),
        };
        return Ok(Parameter {
            oneof: Some(ParameterOneof::BodyParameter(body)),
        });
    }
    // Fields shared by the four non-body shapes: the parameter's own keys, then its primitive.
    macro_rules! sub_schema {
        ($ty:ident { $($field:ident: $value:expr),* $(,)? }) => {
            primitive!(Primitive::read(at)?, $ty {
                required: at.boolean("required")?,
                r#in: location.clone(),
                description: at.string("description")?,
                name: at.string("name")?,
                $($field: $value,)*
            })
        };
    }
    let oneof = match location.as_str() {
        "query" => {
            NonBodyParameterOneof::QueryParameterSubSchema(sub_schema!(QueryParameterSubSchema {
                allow_empty_value: at.boolean("allowEmptyValue")?
            }))
        }
        "path" => {
            NonBodyParameterOneof::PathParameterSubSchema(sub_schema!(PathParameterSubSchema {}))
        }
        "header" => NonBodyParameterOneof::HeaderParameterSubSchema(sub_schema!(
            HeaderParameterSubSchema {}
        )),
        "formData" => NonBodyParameterOneof::FormDataParameterSubSchema(sub_schema!(
            FormDataParameterSubSchema {
                allow_empty_value: at.boolean("allowEmptyValue")?
            }
        )),
        other => {
            return Err(at.error("in", format!("unknown parameter location {other:?}")));
        }
    };
    Ok(Parameter {
        oneof: Some(ParameterOneof::NonBodyParameter(NonBodyParameter {
            oneof: Some(oneof),
        })),
    })
}

/// A response header.
pub(super) fn header(at: &At<'_>) -> Result<Header, ProtoError> {
    Ok(primitive!(
        Primitive::read(at)?,
        Header {
            description: at.string("description")?,
        }
    ))
}

/// `items` of a non-body parameter or header, which may nest.
fn primitives_items(at: &At<'_>) -> Result<PrimitivesItems, ProtoError> {
    Ok(primitive!(Primitive::read(at)?, PrimitivesItems {}))
}

/// The validation keywords shared by schemas, non-body parameters, headers and their `items`.
struct Keywords {
    default: Option<Any>,
    maximum: f64,
    exclusive_maximum: bool,
    minimum: f64,
    exclusive_minimum: bool,
    max_length: i64,
    min_length: i64,
    pattern: String,
    max_items: i64,
    min_items: i64,
    unique_items: bool,
    r#enum: Vec<Any>,
    multiple_of: f64,
}

impl Keywords {
    fn read(at: &At<'_>) -> Result<Self, ProtoError> {
        Ok(Keywords {
            default: at.any("default"),
            maximum: at.number("maximum")?,
            exclusive_maximum: at.boolean("exclusiveMaximum")?,
            minimum: at.number("minimum")?,
            exclusive_minimum: at.boolean("exclusiveMinimum")?,
            max_length: at.integer("maxLength")?,
            min_length: at.integer("minLength")?,
            pattern: at.string("pattern")?,
            max_items: at.integer("maxItems")?,
            min_items: at.integer("minItems")?,
            unique_items: at.boolean("uniqueItems")?,
            r#enum: at.any_list("enum")?,
            multiple_of: at.number("multipleOf")?,
        })
    }
}

/// A non-body parameter, header or `items` without its own keys: a type, the [`Keywords`] that
/// constrain it and, for arrays, the `items` inside.
struct Primitive {
    r#type: String,
    format: String,
    items: Option<PrimitivesItems>,
    collection_format: String,
    keywords: Keywords,
    vendor_extension: Vec<NamedAny>,
}

impl Primitive {
    fn read(at: &At<'_>) -> Result<Self, ProtoError> {
        Ok(Primitive {
            r#type: at.string("type")?,
            format: at.string("format")?,
            items: at
                .child("items")?
                .map(|i| primitives_items(&i))
                .transpose()?,
            collection_format: at.string("collectionFormat")?,
            keywords: Keywords::read(at)?,
            vendor_extension: at.vendor_extensions(),
        })
    }
}
