//! gnostic's messages for paths, operations, responses and security.
#![allow(missing_docs)] // One struct per proto message; the proto file is the documentation.

use super::model::{ExternalDocs, JsonReference, NamedAny, NamedString, NamedStringArray, Schema};
use super::model_params::{Header, ParametersItem};

// === Paths and operations ===

#[derive(Clone, PartialEq, prost::Message)]
pub struct Paths {
    #[prost(message, repeated, tag = "1")]
    pub vendor_extension: Vec<NamedAny>,
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedPathItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<PathItem>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PathItem {
    #[prost(string, tag = "1")]
    pub _ref: String,
    #[prost(message, optional, tag = "2")]
    pub get: Option<Operation>,
    #[prost(message, optional, tag = "3")]
    pub put: Option<Operation>,
    #[prost(message, optional, tag = "4")]
    pub post: Option<Operation>,
    #[prost(message, optional, tag = "5")]
    pub delete: Option<Operation>,
    #[prost(message, optional, tag = "6")]
    pub options: Option<Operation>,
    #[prost(message, optional, tag = "7")]
    pub head: Option<Operation>,
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
    #[prost(message, repeated, tag = "9")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, repeated, tag = "10")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Operation {
    #[prost(string, repeated, tag = "1")]
    pub tags: Vec<String>,
    #[prost(string, tag = "2")]
    pub summary: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(message, optional, tag = "4")]
    pub external_docs: Option<ExternalDocs>,
    #[prost(string, tag = "5")]
    pub operation_id: String,
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, optional, tag = "9")]
    pub responses: Option<Responses>,
    #[prost(string, repeated, tag = "10")]
    pub schemes: Vec<String>,
    #[prost(bool, tag = "11")]
    pub deprecated: bool,
    #[prost(message, repeated, tag = "12")]
    pub security: Vec<SecurityRequirement>,
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

// === Responses ===

#[derive(Clone, PartialEq, prost::Message)]
pub struct Responses {
    #[prost(message, repeated, tag = "1")]
    pub response_code: Vec<NamedResponseValue>,
    #[prost(message, repeated, tag = "2")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedResponseValue {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ResponseValue>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseValue {
    #[prost(oneof = "ResponseValueOneof", tags = "1, 2")]
    pub oneof: Option<ResponseValueOneof>,
}

/// `ResponseValue.oneof`.
#[derive(Clone, PartialEq, prost::Oneof)]
// Mirrors the proto oneof; the document is built once per schema change, so size is moot.
#[allow(clippy::large_enum_variant)]
pub enum ResponseValueOneof {
    #[prost(message, tag = "1")]
    Response(Response),
    #[prost(message, tag = "2")]
    JsonReference(JsonReference),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ResponseDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedResponse>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedResponse {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Response>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Response {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(message, optional, tag = "2")]
    pub schema: Option<SchemaItem>,
    #[prost(message, optional, tag = "3")]
    pub headers: Option<Headers>,
    #[prost(message, optional, tag = "4")]
    pub examples: Option<Examples>,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `SchemaItem`; only its `schema` arm is produced (a `FileSchema` is also a valid `Schema`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct SchemaItem {
    #[prost(message, optional, tag = "1")]
    pub schema: Option<Schema>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Headers {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedHeader>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedHeader {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Header>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Examples {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedAny>,
}

// === Security ===

#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityRequirement {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedStringArray>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSecurityDefinitionsItem>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct NamedSecurityDefinitionsItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<SecurityDefinitionsItem>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct SecurityDefinitionsItem {
    #[prost(oneof = "SecurityScheme", tags = "1, 2, 3, 4, 5, 6")]
    pub oneof: Option<SecurityScheme>,
}

/// `SecurityDefinitionsItem.oneof`. `Oauth2PasswordSecurity` and `Oauth2ApplicationSecurity` have
/// identical fields, so both use [`OAuth2TokenUrl`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum SecurityScheme {
    #[prost(message, tag = "1")]
    BasicAuthenticationSecurity(BasicAuthenticationSecurity),
    #[prost(message, tag = "2")]
    ApiKeySecurity(ApiKeySecurity),
    #[prost(message, tag = "3")]
    Oauth2ImplicitSecurity(OAuth2Implicit),
    #[prost(message, tag = "4")]
    Oauth2PasswordSecurity(OAuth2TokenUrl),
    #[prost(message, tag = "5")]
    Oauth2ApplicationSecurity(OAuth2TokenUrl),
    #[prost(message, tag = "6")]
    Oauth2AccessCodeSecurity(OAuth2AccessCode),
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BasicAuthenticationSecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub description: String,
    #[prost(message, repeated, tag = "3")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ApiKeySecurity {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, repeated, tag = "5")]
    pub vendor_extension: Vec<NamedAny>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Oauth2Scopes {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedString>,
}

/// `Oauth2ImplicitSecurity`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OAuth2Implicit {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub authorization_url: String,
    #[prost(string, tag = "5")]
    pub description: String,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Oauth2PasswordSecurity` and `Oauth2ApplicationSecurity`, which are field-for-field equal.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OAuth2TokenUrl {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub token_url: String,
    #[prost(string, tag = "5")]
    pub description: String,
    #[prost(message, repeated, tag = "6")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `Oauth2AccessCodeSecurity`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OAuth2AccessCode {
    #[prost(string, tag = "1")]
    pub r#type: String,
    #[prost(string, tag = "2")]
    pub flow: String,
    #[prost(message, optional, tag = "3")]
    pub scopes: Option<Oauth2Scopes>,
    #[prost(string, tag = "4")]
    pub authorization_url: String,
    #[prost(string, tag = "5")]
    pub token_url: String,
    #[prost(string, tag = "6")]
    pub description: String,
    #[prost(message, repeated, tag = "7")]
    pub vendor_extension: Vec<NamedAny>,
}
