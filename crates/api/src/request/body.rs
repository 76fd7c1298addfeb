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

    #[test]
    fn bodies_nested_too_deep_are_bad_requests_in_every_format() {
        use crate::limits::MAX_DEPTH;
        let flow = |n: usize| "[".repeat(n) + "1" + &"]".repeat(n);
        let blocks =
            |n: usize| -> String { (0..n).map(|i| format!("{}- \n", "  ".repeat(i))).collect() };
        for (what, format, body) in [
            ("JSON", BodyFormat::Json, flow(MAX_DEPTH + 1)),
            ("JSON far too deep", BodyFormat::Json, flow(100_000)),
            (
                "YAML flow",
                BodyFormat::Yaml,
                format!("a: {}", flow(MAX_DEPTH)),
            ),
            ("YAML blocks", BodyFormat::Yaml, blocks(MAX_DEPTH + 1)),
            ("YAML far too deep", BodyFormat::Yaml, flow(100_000)),
            (
                "apply",
                BodyFormat::ApplyPatch,
                format!("a: {}", flow(MAX_DEPTH)),
            ),
            ("merge patch", BodyFormat::MergePatch, flow(MAX_DEPTH + 1)),
        ] {
            let e = decode_body(format, body.as_bytes()).unwrap_err();
            assert_eq!((e.code, e.reason), (400, "BadRequest"), "{what}: {e}");
        }
        let deepest = decode_body(BodyFormat::Yaml, blocks(MAX_DEPTH).as_bytes()).unwrap();
        assert_eq!(
            crate::limits::depth_within(&deepest, MAX_DEPTH),
            Some(MAX_DEPTH)
        );
    }

    #[test]
    fn yaml_aliases_cannot_multiply_a_body() {
        // Each level names the one before nine times: 9^9 leaves from a few hundred bytes.
        let mut yaml = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            yaml.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let e = decode_body(BodyFormat::Yaml, yaml.as_bytes()).unwrap_err();
        assert_eq!(e.code, 400, "{e}");
    }

    #[test]
    fn a_protobuf_body_of_another_type_is_refused_before_decoding() {
        let cm = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}
        });
        let body = crate::protobuf::encode_k8s_protobuf(&cm).unwrap();
        let expect = |api_version, kind| Expect { api_version, kind };
        let ok = decode_typed_body(BodyFormat::Protobuf, &body, expect(Some("v1"), "ConfigMap"));
        assert_eq!(ok.unwrap()["metadata"]["name"], "a");
        for (want, message) in [
            (
                expect(Some("v1"), "Secret"),
                "the kind in the data (ConfigMap)",
            ),
            (
                expect(Some("apps/v1"), "ConfigMap"),
                "the API version in the data (v1)",
            ),
        ] {
            let e = decode_typed_body(BodyFormat::Protobuf, &body, want).unwrap_err();
            assert_eq!(e.code, 400);
            assert!(e.message.contains(message), "{}", e.message);
        }
        // Any version, for types every group serves.
        let any = expect(None, "ConfigMap");
        assert!(decode_typed_body(BodyFormat::Protobuf, &body, any).is_ok());
    }
}
