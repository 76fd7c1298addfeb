//! gnostic's parameter messages: body parameters, the four kinds of non-body parameter, response
//! headers and the primitive `items` they share.
//!
//! The non-body structs repeat the same twenty-odd fields in slightly different tag orders; each
//! follows `OpenAPIv2.proto` exactly.
#![allow(missing_docs)] // One struct per proto message; the proto file is the documentation.

use super::model::{Any, JsonReference, NamedAny, Schema};

#[derive(Clone, PartialEq, prost::Message)]
pub struct ParameterDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedParameter>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedParameter {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Parameter>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ParametersItem {
    #[prost(oneof = "ParametersItemOneof", tags = "1, 2")]
    pub oneof: Option<ParametersItemOneof>,
}

/// `ParametersItem.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
// Mirrors the proto oneof; the document is built once per schema change, so size is moot.
#[allow(clippy::large_enum_variant)]
pub enum ParametersItemOneof {
    #[prost(message, tag = "1")]
    Parameter(Parameter),
    #[prost(message, tag = "2")]
    JsonReference(JsonReference),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Parameter {
    #[prost(oneof = "ParameterOneof", tags = "1, 2")]
    pub oneof: Option<ParameterOneof>,
}

/// `Parameter.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ParameterOneof {
    #[prost(message, tag = "1")]
    BodyParameter(BodyParameter),
    #[prost(message, tag = "2")]
    NonBodyParameter(NonBodyParameter),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BodyParameter {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(bool, tag = "4")]
    pub required: bool,
    #[prost(message, optional, tag = "5")]
    pub schema: Option<Schema>,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NonBodyParameter {
    #[prost(oneof = "NonBodyParameterOneof", tags = "1, 2, 3, 4")]
    pub oneof: Option<NonBodyParameterOneof>,
}

/// `NonBodyParameter.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum NonBodyParameterOneof {
    #[prost(message, tag = "1")]
    HeaderParameterSubSchema(HeaderParameterSubSchema),
    #[prost(message, tag = "2")]
    FormDataParameterSubSchema(FormDataParameterSubSchema),
    #[prost(message, tag = "3")]
    QueryParameterSubSchema(QueryParameterSubSchema),
    #[prost(message, tag = "4")]
    PathParameterSubSchema(PathParameterSubSchema),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct HeaderParameterSubSchema {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(string, tag = "5")]
    pub r#type: String,
    #[prost(string, tag = "6")]
    pub format: String,
    #[prost(message, optional, tag = "7")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "8")]
    pub collection_format: String,
    #[prost(message, optional, tag = "9")]
    pub default: Option<Any>,
    #[prost(double, tag = "10")]
    pub maximum: f64,
    #[prost(bool, tag = "11")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "12")]
    pub minimum: f64,
    #[prost(bool, tag = "13")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "14")]
    pub max_length: i64,
    #[prost(int64, tag = "15")]
    pub min_length: i64,
    #[prost(string, tag = "16")]
    pub pattern: String,
    #[prost(int64, tag = "17")]
    pub max_items: i64,
    #[prost(int64, tag = "18")]
    pub min_items: i64,
    #[prost(bool, tag = "19")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "21")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "22")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FormDataParameterSubSchema {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(bool, tag = "5")]
    pub allow_empty_value: bool,
    #[prost(string, tag = "6")]
    pub r#type: String,
    #[prost(string, tag = "7")]
    pub format: String,
    #[prost(message, optional, tag = "8")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "9")]
    pub collection_format: String,
    #[prost(message, optional, tag = "10")]
    pub default: Option<Any>,
    #[prost(double, tag = "11")]
    pub maximum: f64,
    #[prost(bool, tag = "12")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "13")]
    pub minimum: f64,
    #[prost(bool, tag = "14")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "15")]
    pub max_length: i64,
    #[prost(int64, tag = "16")]
    pub min_length: i64,
    #[prost(string, tag = "17")]
    pub pattern: String,
    #[prost(int64, tag = "18")]
    pub max_items: i64,
    #[prost(int64, tag = "19")]
    pub min_items: i64,
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "21")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "22")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "23")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct QueryParameterSubSchema {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(bool, tag = "5")]
    pub allow_empty_value: bool,
    #[prost(string, tag = "6")]
    pub r#type: String,
    #[prost(string, tag = "7")]
    pub format: String,
    #[prost(message, optional, tag = "8")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "9")]
    pub collection_format: String,
    #[prost(message, optional, tag = "10")]
    pub default: Option<Any>,
    #[prost(double, tag = "11")]
    pub maximum: f64,
    #[prost(bool, tag = "12")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "13")]
    pub minimum: f64,
    #[prost(bool, tag = "14")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "15")]
    pub max_length: i64,
    #[prost(int64, tag = "16")]
    pub min_length: i64,
    #[prost(string, tag = "17")]
    pub pattern: String,
    #[prost(int64, tag = "18")]
    pub max_items: i64,
    #[prost(int64, tag = "19")]
    pub min_items: i64,
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "21")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "22")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "23")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PathParameterSubSchema {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(string, tag = "5")]
    pub r#type: String,
    #[prost(string, tag = "6")]
    pub format: String,
    #[prost(message, optional, tag = "7")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "8")]
    pub collection_format: String,
    #[prost(message, optional, tag = "9")]
    pub default: Option<Any>,
    #[prost(double, tag = "10")]
    pub maximum: f64,
    #[prost(bool, tag = "11")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "12")]
    pub minimum: f64,
    #[prost(bool, tag = "13")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "14")]
    pub max_length: i64,
    #[prost(int64, tag = "15")]
    pub min_length: i64,
    #[prost(string, tag = "16")]
    pub pattern: String,
    #[prost(int64, tag = "17")]
    pub max_items: i64,
    #[prost(int64, tag = "18")]
    pub min_items: i64,
    #[prost(bool, tag = "19")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "21")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "22")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Header {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(message, optional, tag = "3")]
    pub items: Option<PrimitivesItems>,
    #[prost(string, tag = "4")]
    pub collection_format: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub maximum: f64,
    #[prost(bool, tag = "7")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "8")]
    pub minimum: f64,
    #[prost(bool, tag = "9")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "10")]
    pub max_length: i64,
    #[prost(int64, tag = "11")]
    pub min_length: i64,
    #[prost(string, tag = "12")]
    pub pattern: String,
    #[prost(int64, tag = "13")]
    pub max_items: i64,
    #[prost(int64, tag = "14")]
    pub min_items: i64,
    #[prost(bool, tag = "15")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "16")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "17")]
    pub multiple_of: f64,
    #[prost(string, tag = "18")]
    pub description: String,
    #[prost(message, repeated, tag = "19")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PrimitivesItems {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(message, optional, boxed, tag = "3")]
    pub items: Option<Box<PrimitivesItems>>,
    #[prost(string, tag = "4")]
    pub collection_format: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub maximum: f64,
    #[prost(bool, tag = "7")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "8")]
    pub minimum: f64,
    #[prost(bool, tag = "9")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "10")]
    pub max_length: i64,
    #[prost(int64, tag = "11")]
    pub min_length: i64,
    #[prost(string, tag = "12")]
    pub pattern: String,
    #[prost(int64, tag = "13")]
    pub max_items: i64,
    #[prost(int64, tag = "14")]
    pub min_items: i64,
    #[prost(bool, tag = "15")]
    pub unique_items: bool,
    #[prost(message, repeated, tag = "16")]
    pub r#enum: Vec<Any>,
    #[prost(double, tag = "17")]
    pub multiple_of: f64,
    #[prost(message, repeated, tag = "18")]
    pub vendor_extension: Vec<NamedAny>,
}
