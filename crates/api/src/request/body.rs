//! Decoding request bodies: JSON, YAML and Kubernetes protobuf, with a size limit.

use serde_json::Value;

use crate::error::{ApiError, Result};

/// The largest request body accepted (kube-apiserver's limit is 3 MiB).
pub const MAX_BODY: usize = 3 * 1024 * 1024;

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

/// Decode a body to JSON. YAML must hold exactly one document.
pub fn decode_body(format: BodyFormat, bytes: &[u8]) -> Result<Value> {
    if bytes.len() > MAX_BODY {
        return Err(too_large());
    }
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
mod tests {
    use super::*;

    #[test]
    fn decodes_json_and_yaml_and_rejects_garbage() {
        let j = decode_body(BodyFormat::Json, br#"{"a":1}"#).unwrap();
        assert_eq!(j["a"], 1);
        let y = decode_body(BodyFormat::Yaml, b"a: 1\nb: [x]\n").unwrap();
        assert_eq!(y["b"][0], "x");
        assert_eq!(
            decode_body(BodyFormat::Json, b"{nope").unwrap_err().code,
            400
        );
        assert_eq!(
            decode_body(BodyFormat::Yaml, b"a: 1\n---\nb: 2\n")
                .unwrap_err()
                .code,
            400
        );
        let big = vec![b' '; MAX_BODY + 1];
        let e = decode_body(BodyFormat::Json, &big).unwrap_err();
        assert_eq!(
            (e.code, e.reason, e.message.as_str()),
            (
                413,
                "RequestEntityTooLarge",
                "Request entity too large: limit is 3145728"
            )
        );
        assert_eq!(
            BodyFormat::from_content_type(Some("text/html"))
                .unwrap_err()
                .code,
            415
        );
    }
}
