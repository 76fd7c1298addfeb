//! Decoding request bodies: JSON, YAML and Kubernetes protobuf, bounded in size and depth
//! ([`crate::limits`]).

use serde_json::Value;

use crate::error::{ApiError, Result};
pub use crate::limits::MAX_BODY;

/// The type a body must have, for protobuf bodies: their envelope names it, and a body of
/// another type is refused before it is decoded (the decoder follows the type the envelope
/// names, so a body sent to one URL would otherwise be decoded as any message at all).
#[derive(Debug, Clone, Copy)]
pub struct Expect<'a> {
    /// The `apiVersion`; `None` where any group's version is the same type (`DeleteOptions`).
    pub api_version: Option<&'a str>,
    /// The `kind`.
    pub kind: &'a str,
}

impl Expect<'_> {
    /// Refuses a protobuf body whose envelope names another type (400, in the words of a JSON
    /// body of the wrong type).
    fn check_protobuf(&self, bytes: &[u8]) -> Result<()> {
        let (api_version, kind) = crate::protobuf::k8s_protobuf_type(bytes).map_err(|e| {
            ApiError::bad_request(format!("the protobuf body could not be decoded: {e}"))
        })?;
        if kind != self.kind {
            return Err(ApiError::bad_request(format!(
                "the kind in the data ({kind}) does not match the expected kind ({})",
                self.kind
            )));
        }
        match self.api_version {
            Some(want) if want != api_version => Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API \
                 version ({want})"
            ))),
            _ => Ok(()),
        }
    }
}

/// Encoding of a request body, from its Content-Type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFormat {
    /// application/json.
    Json,
    /// application/yaml.
    Yaml,
    /// application/vnd.kubernetes.protobuf.
    Protobuf,
    /// application/json-patch+json.
    JsonPatch,
    /// application/merge-patch+json.
    MergePatch,
    /// application/strategic-merge-patch+json.
    StrategicMergePatch,
    /// application/apply-patch+yaml (server-side apply; YAML or JSON).
    ApplyPatch,
}

impl BodyFormat {
    /// From a Content-Type header value.
    pub fn from_content_type(ct: Option<&str>) -> Result<BodyFormat> {
        let ct = ct.unwrap_or("application/json");
        let base = ct
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        Ok(match base.as_str() {
            "application/json" | "" | "*/*" => BodyFormat::Json,
            "application/yaml" | "application/x-yaml" | "text/yaml" => BodyFormat::Yaml,
            "application/vnd.kubernetes.protobuf" => BodyFormat::Protobuf,
            "application/json-patch+json" => BodyFormat::JsonPatch,
            "application/merge-patch+json" => BodyFormat::MergePatch,
            "application/strategic-merge-patch+json" => BodyFormat::StrategicMergePatch,
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => {
                BodyFormat::ApplyPatch
            }
            other => {
                return Err(ApiError::unsupported_media_type(format!(
                    "the body of the request was in an unknown format - accepted media types \
                     include: application/json, application/yaml, \
                     application/vnd.kubernetes.protobuf (got {other:?})"
                )))
            }
        })
    }

    /// Is this one of the PATCH content types?
    pub fn is_patch(self) -> bool {
        matches!(
            self,
            BodyFormat::JsonPatch
                | BodyFormat::MergePatch
                | BodyFormat::StrategicMergePatch
                | BodyFormat::ApplyPatch
        )
    }
}

/// A body over [`MAX_BODY`], refused as kube-apiserver refuses it (413 RequestEntityTooLarge,
/// `Request entity too large: limit is 3145728`).
pub fn too_large() -> ApiError {
    ApiError::too_large(format!("Request entity too large: limit is {MAX_BODY}"))
}

/// Decode a body that must be of type `expect` to JSON: as [`decode_body`], and a protobuf
/// body naming another type is refused before it is decoded.
pub fn decode_typed_body(format: BodyFormat, bytes: &[u8], expect: Expect<'_>) -> Result<Value> {
    if format == BodyFormat::Protobuf && bytes.len() <= MAX_BODY {
        expect.check_protobuf(bytes)?;
    }
    decode_body(format, bytes)
}

/// Decode a body to JSON. YAML must hold exactly one document; no format may nest deeper than
/// [`MAX_DEPTH`](crate::limits::MAX_DEPTH).
pub fn decode_body(format: BodyFormat, bytes: &[u8]) -> Result<Value> {
    if bytes.len() > MAX_BODY {
        return Err(too_large());
    }
    let value = decode_unbounded(format, bytes)?;
    crate::limits::check_body_depth(&value)?;
    Ok(value)
}

/// The decoders themselves; each has its own depth limit (serde_json's and serde_yaml's
/// recursion limits, the protobuf decoder's), none of them exactly [`crate::limits`]'.
fn decode_unbounded(format: BodyFormat, bytes: &[u8]) -> Result<Value> {
    match format {
        BodyFormat::Protobuf => crate::protobuf_body(bytes),
        BodyFormat::Yaml | BodyFormat::ApplyPatch => {
            // JSON is YAML, but parse it as JSON first for exact numbers and speed.
            if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
                return Ok(v);
            }
            let text = std::str::from_utf8(bytes)
                .map_err(|_| ApiError::bad_request("the YAML body is not valid UTF-8"))?;
            let mut docs = serde_yaml::Deserializer::from_str(text);
            let first = docs
                .next()
                .ok_or_else(|| ApiError::bad_request("the YAML body holds no document"))?;
            let v: Value = serde::Deserialize::deserialize(first)
                .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
            if docs.next().is_some() {
                return Err(ApiError::bad_request(
                    "the YAML body holds more than one document; send one object per request",
                ));
            }
            Ok(v)
        }
        _ => serde_json::from_slice(bytes)
            .map_err(|e| ApiError::bad_request(format!("the body is not valid JSON: {e}"))),
    }
}

#[cfg(test)]
mod tests;
