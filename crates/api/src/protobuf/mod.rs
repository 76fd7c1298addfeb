//! Protobuf encodings the hub must speak to unmodified kubectl.
//!
//! Two unrelated formats share this module because both are "protobuf that kubectl sends or
//! expects"; neither runs a code generator at build time (the generated tables are checked in):
//!
//! - [`openapi_v2`]: the hub's Swagger document encoded as gnostic's `openapi.v2.Document`, which
//!   kubectl up to 1.28 downloads before validating a write. The messages are `prost` structs
//!   generated from `OpenAPIv2.proto` (`openapi_v2/model.rs`, from `tools/openapi-v2-codegen`);
//!   free-form values go in as YAML text (`yaml`).
//! - [`k8s`]: Kubernetes' own protobuf wire format (`application/vnd.kubernetes.protobuf`), which
//!   kubectl 1.32+ uses for the request bodies of its typed-client writes (`kubectl create
//!   configmap`, `create token`, ...). Bodies are decoded generically into the JSON the rest of
//!   the hub works with, driven by the field table re-exported in [`table`] (the checked-in
//!   `schema::k8s_generated`, from `tools/k8s-codegen`) and Go's JSON rules per field
//!   (`k8s/go_fields.rs`, from `tools/protobuf-gen/go_fields.sh`). The hub never answers in
//!   this format; the encoder, the decoder's inverse, serves the tests.
//!
//! `wire` reads and writes the raw protobuf fields [`k8s`] works with (the OpenAPI messages are
//! `prost` structs); [`ProtoError`] says which step failed, for both.

pub mod k8s;
pub mod openapi_v2;
pub mod table;
mod wire;
mod yaml;

pub use k8s::{
    decode_k8s_protobuf, decode_k8s_protobuf_with, encode_k8s_protobuf, encode_k8s_protobuf_with,
    k8s_protobuf_type, JsonNames, KUBERNETES_PROTOBUF_MEDIA_TYPE,
};
pub use openapi_v2::{
    openapi_v2_to_protobuf, OPENAPI_V2_PROTOBUF_CONTENT_TYPE, OPENAPI_V2_PROTOBUF_MEDIA_TYPES,
};

/// Why a protobuf conversion failed.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    /// The Swagger document has a value of the wrong shape at `path` (a JSON pointer from `#`).
    #[error("reading the OpenAPI document at {path}: {reason}")]
    ReadOpenApi {
        /// Where in the document, e.g. `#/definitions/io.k8s.api.core.v1.Pod/required`.
        path: String,
        /// What was wrong.
        reason: String,
    },
    /// A Kubernetes protobuf body lacks the `k8s\\0` magic or has a malformed envelope.
    #[error("reading the protobuf envelope: {reason}")]
    ReadEnvelope {
        /// What was wrong.
        reason: String,
    },
    /// No protobuf message is known for the body's `apiVersion` and `kind`.
    #[error("no protobuf message is known for apiVersion {api_version:?}, kind {kind:?}")]
    ResolveKind {
        /// The `apiVersion` of the object.
        api_version: String,
        /// The `kind` of the object.
        kind: String,
    },
    /// The bytes of a message are not valid for its field table.
    #[error("decoding {message}: {reason}")]
    DecodeBody {
        /// The proto message being decoded.
        message: String,
        /// What was wrong.
        reason: String,
    },
    /// A JSON value does not fit the field it is written to.
    #[error("encoding {message}: {reason}")]
    EncodeBody {
        /// The proto message being encoded.
        message: String,
        /// What was wrong.
        reason: String,
    },
    /// A field refers to a message the field table does not have.
    #[error("the field table has no message {message} (used by {context})")]
    UnknownMessage {
        /// The missing proto message name.
        message: String,
        /// The field that refers to it.
        context: String,
    },
}
