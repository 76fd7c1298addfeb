//! Swagger schemas and parameters to gnostic messages.

use serde_json::Value;

use super::model::{
    AdditionalPropertiesItem, AdditionalPropertiesItemOneof as AdditionalProperties, BodyParameter,
    ExternalDocs, FormDataParameterSubSchema, Header, HeaderParameterSubSchema, ItemsItem,
    JsonReference, NamedSchema, NonBodyParameter, NonBodyParameterOneof, Parameter, ParameterOneof,
    ParametersItem, ParametersItemOneof, PathParameterSubSchema, PrimitivesItems, Properties,
    QueryParameterSubSchema, Schema, TypeItem, Xml,
};
use super::reader::At;
use crate::protobuf::ProtoError;

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
    Ok(Schema {
        _ref: at.string("$ref")?,
        format: at.string("format")?,
        title: at.string("title")?,
        description: at.string("description")?,
        default: at.any("default"),
        multiple_of: at.number("multipleOf")?,
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
        max_properties: at.integer("maxProperties")?,
        min_properties: at.integer("minProperties")?,
        required: at.strings("required")?,
        r#enum: at.any_list("enum")?,
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
    })
}

/// A map of schemas (`definitions`, `properties`), in document order.
pub(super) fn named_schemas(at: &At<'_>, key: &str) -> Result<Vec<NamedSchema>, ProtoError> {
    at.entries(key)?
        .into_iter()
        .map(|(name, value)| {
            Ok(NamedSchema {
                name,
                value: Some(schema(&value)?),
            })
        })
        .collect()
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
    let p = Primitive::read(at)?;
    // Fields shared by the four non-body shapes, filled from `p` and the parameter's own keys.
    macro_rules! sub_schema {
        ($ty:ident { $($field:ident: $value:expr),* $(,)? }) => {
            $ty {
                required: at.boolean("required")?,
                r#in: location.clone(),
                description: at.string("description")?,
                name: at.string("name")?,
                $($field: $value,)*
                r#type: p.r#type,
                format: p.format,
                items: p.items,
                collection_format: p.collection_format,
                default: p.default,
                maximum: p.maximum,
                exclusive_maximum: p.exclusive_maximum,
                minimum: p.minimum,
                exclusive_minimum: p.exclusive_minimum,
                max_length: p.max_length,
                min_length: p.min_length,
                pattern: p.pattern,
                max_items: p.max_items,
                min_items: p.min_items,
                unique_items: p.unique_items,
                r#enum: p.r#enum,
                multiple_of: p.multiple_of,
                vendor_extension: p.vendor_extension,
            }
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
    let p = Primitive::read(at)?;
    Ok(Header {
        r#type: p.r#type,
        format: p.format,
        items: p.items,
        collection_format: p.collection_format,
        default: p.default,
        maximum: p.maximum,
        exclusive_maximum: p.exclusive_maximum,
        minimum: p.minimum,
        exclusive_minimum: p.exclusive_minimum,
        max_length: p.max_length,
        min_length: p.min_length,
        pattern: p.pattern,
        max_items: p.max_items,
        min_items: p.min_items,
        unique_items: p.unique_items,
        r#enum: p.r#enum,
        multiple_of: p.multiple_of,
        description: at.string("description")?,
        vendor_extension: p.vendor_extension,
    })
}

/// `items` of a non-body parameter or header, which may nest.
fn primitives_items(at: &At<'_>) -> Result<PrimitivesItems, ProtoError> {
    let p = Primitive::read(at)?;
    Ok(PrimitivesItems {
        r#type: p.r#type,
        format: p.format,
        items: p.items.map(Box::new),
        collection_format: p.collection_format,
        default: p.default,
        maximum: p.maximum,
        exclusive_maximum: p.exclusive_maximum,
        minimum: p.minimum,
        exclusive_minimum: p.exclusive_minimum,
        max_length: p.max_length,
        min_length: p.min_length,
        pattern: p.pattern,
        max_items: p.max_items,
        min_items: p.min_items,
        unique_items: p.unique_items,
        r#enum: p.r#enum,
        multiple_of: p.multiple_of,
        vendor_extension: p.vendor_extension,
    })
}

/// The validation keywords shared by non-body parameters, headers and their `items`.
struct Primitive {
    r#type: String,
    format: String,
    items: Option<PrimitivesItems>,
    collection_format: String,
    default: Option<super::model::Any>,
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
    r#enum: Vec<super::model::Any>,
    multiple_of: f64,
    vendor_extension: Vec<super::model::NamedAny>,
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
            vendor_extension: at.vendor_extensions(),
        })
    }
}
