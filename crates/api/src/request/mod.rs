//! Everything about an incoming request before a handler acts on it: path, query, body, Accept.

pub mod body;
pub mod info;
pub mod query;
pub mod strict;

pub use body::{decode_body, decode_typed_body, BodyFormat, Expect};
pub use info::RequestInfo;
pub use query::{FieldValidation, Query};

/// What the client asked the response to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// The object(s) as JSON.
    Object,
    /// `meta.k8s.io` Table (kubectl get).
    Table,
    /// `PartialObjectMetadata` / `PartialObjectMetadataList`.
    Metadata,
}

/// Parse the `Accept` header's `as=` parameter.
pub fn negotiate(accept: Option<&str>) -> Want {
    let Some(accept) = accept else {
        return Want::Object;
    };
    // Clients list alternatives in preference order; take the first we can serve.
    for alt in accept.split(',') {
        let alt = alt.trim();
        if alt.contains("as=Table") {
            return Want::Table;
        }
        if alt.contains("as=PartialObjectMetadata") {
            return Want::Metadata;
        }
        if alt.starts_with("application/json")
            || alt.starts_with("*/*")
            || alt.starts_with("application/vnd.kubernetes.protobuf")
            || alt.starts_with("application/yaml")
        {
            return Want::Object;
        }
    }
    Want::Object
}
