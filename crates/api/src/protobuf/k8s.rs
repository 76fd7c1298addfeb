//! Kubernetes' protobuf wire format (`application/vnd.kubernetes.protobuf`) to and from the JSON
//! the hub works with.
//!
//! Since client-go 0.32 (kubectl 1.32), typed clients send built-in kinds as protobuf when the
//! rest config names no content type, which is how kubectl builds them: `kubectl create
//! configmap|secret|deployment|...`, `create token`, `auth can-i`, `autoscale`, `debug`,
//! `certificate approve`, and `drain --disable-eviction` (a protobuf `DeleteOptions`) all arrive
//! this way. They still accept JSON back.
//!
//! A body is the magic `k8s\0` and a `runtime.Unknown` envelope: `typeMeta` (1: `apiVersion`=1,
//! `kind`=2), `raw`=2 (the typed message), `contentEncoding`=3, `contentType`=4. The typed message
//! is decoded generically from the field table in [`table`](super::table); JSON names,
//! inlined embedded structs and Go's omitempty rules come from `names`, and types with custom
//! JSON forms (times, quantities, int-or-string, raw JSON) from `wellknown`.

mod decode;
mod encode;
mod go_fields;
mod names;
#[cfg(test)]
mod tests;
mod time;
mod wellknown;

use serde_json::{Map, Value};

use self::decode::Decoder;
use self::encode::Encoder;
pub use self::names::{lower_camel, GoNames, JsonNames};
use super::wire::{put_bytes_field, Reader, Wire};
use super::ProtoError;
use crate::protobuf::table::{MessageMeta, ProtoKind, MESSAGES};

/// The media type of Kubernetes protobuf bodies.
pub const KUBERNETES_PROTOBUF_MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every Kubernetes protobuf body starts with.
pub const MAGIC: &[u8; 4] = b"k8s\0";

/// Decodes a Kubernetes protobuf body into the object's JSON, `kind` and `apiVersion` first.
pub fn decode_k8s_protobuf(body: &[u8]) -> Result<Value, ProtoError> {
    decode_k8s_protobuf_with(body, &GoNames)
}

/// [`decode_k8s_protobuf`], with JSON names answered first by `names` (e.g. the schema catalog).
///
/// Messages nest at most [`MAX_DEPTH`](crate::limits::MAX_DEPTH) deep: a schema of ten
/// thousand nested `not`s is refused, not followed down until the stack runs out.
pub fn decode_k8s_protobuf_with(body: &[u8], names: &dyn JsonNames) -> Result<Value, ProtoError> {
    let unknown = Unknown::of_body(body)?;
    let meta = message_for_kind(&unknown.api_version, &unknown.kind).ok_or_else(|| {
        ProtoError::ResolveKind {
            api_version: unknown.api_version.clone(),
            kind: unknown.kind.clone(),
        }
    })?;
    let decoded = Decoder::new(names).message(meta, unknown.raw)?;
    let Value::Object(fields) = decoded else {
        return Err(ProtoError::DecodeBody {
            message: meta.proto.to_owned(),
            reason: "a top-level object must decode to a JSON object".to_owned(),
        });
    };
    let mut object = Map::new();
    object.insert("kind".to_owned(), Value::String(unknown.kind));
    object.insert("apiVersion".to_owned(), Value::String(unknown.api_version));
    object.extend(
        fields
            .into_iter()
            .filter(|(k, _)| k != "kind" && k != "apiVersion"),
    );
    Ok(Value::Object(object))
}

/// The `(apiVersion, kind)` a Kubernetes protobuf body's envelope names, read without decoding
/// the object: a caller refuses a body of another kind than its URL's before decoding it.
pub fn k8s_protobuf_type(body: &[u8]) -> Result<(String, String), ProtoError> {
    let unknown = Unknown::of_body(body)?;
    Ok((unknown.api_version, unknown.kind))
}

/// Encodes a Kubernetes JSON object (with `apiVersion` and `kind`) as a protobuf body.
pub fn encode_k8s_protobuf(obj: &Value) -> Result<Vec<u8>, ProtoError> {
    encode_k8s_protobuf_with(obj, &GoNames)
}

/// [`encode_k8s_protobuf`], with JSON names answered first by `names`.
pub fn encode_k8s_protobuf_with(obj: &Value, names: &dyn JsonNames) -> Result<Vec<u8>, ProtoError> {
    let text = |key: &str| {
        obj.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let meta = message_for_kind(&api_version, &kind).ok_or_else(|| ProtoError::ResolveKind {
        api_version: api_version.clone(),
        kind: kind.clone(),
    })?;
    let mut raw = Vec::new();
    Encoder { names }.message(meta, obj, &mut raw)?;

    let mut type_meta = Vec::new();
    put_bytes_field(&mut type_meta, 1, api_version.as_bytes());
    put_bytes_field(&mut type_meta, 2, kind.as_bytes());
    let mut body = MAGIC.to_vec();
    put_bytes_field(&mut body, 1, &type_meta);
    put_bytes_field(&mut body, 2, &raw);
    put_bytes_field(&mut body, 3, b"");
    put_bytes_field(&mut body, 4, b"");
    Ok(body)
}

/// The table entry for a kind: `apps/v1` `Deployment` → `k8s.io.api.apps.v1.Deployment`.
///
/// The group picks the proto package (`rbac.authorization.k8s.io` → `k8s.io.api.rbac`, the core
/// group → `k8s.io.api.core`); kinds every group carries (`DeleteOptions`, `Status`, ...) fall
/// back to `meta/v1`.
pub fn message_for_kind(api_version: &str, kind: &str) -> Option<&'static MessageMeta> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let package = match group {
        "" => "k8s.io.api.core".to_owned(),
        "apiextensions.k8s.io" => {
            "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions".to_owned()
        }
        "apiregistration.k8s.io" => "k8s.io.kube_aggregator.pkg.apis.apiregistration".to_owned(),
        "internal.apiserver.k8s.io" => "k8s.io.api.apiserverinternal".to_owned(),
        "meta.k8s.io" => "k8s.io.apimachinery.pkg.apis.meta".to_owned(),
        group => format!("k8s.io.api.{}", group.split('.').next().unwrap_or(group)),
    };
    find_message(&format!("{package}.{version}.{kind}"))
        .or_else(|| find_message(&format!("k8s.io.apimachinery.pkg.apis.meta.v1.{kind}")))
}

/// The table entry for a proto message name; case-insensitive, since prost respells acronyms
/// (`IPBlock` → `IpBlock`) and the table may use either spelling.
pub fn find_message(proto: &str) -> Option<&'static MessageMeta> {
    match MESSAGES.binary_search_by(|m| m.proto.cmp(proto)) {
        Ok(i) => Some(&MESSAGES[i]),
        Err(_) => MESSAGES
            .iter()
            .find(|m| m.proto.eq_ignore_ascii_case(proto)),
    }
}

/// Scalars that may arrive packed in one length-delimited field.
fn is_packable(kind: &ProtoKind) -> bool {
    !matches!(
        kind,
        ProtoKind::String | ProtoKind::Bytes | ProtoKind::Message
    )
}

/// `runtime.Unknown`, the envelope of every body.
struct Unknown<'a> {
    api_version: String,
    kind: String,
    raw: &'a [u8],
    content_encoding: String,
}

impl<'a> Unknown<'a> {
    /// The envelope of a whole body (after the magic), in an encoding this module reads.
    fn of_body(body: &'a [u8]) -> Result<Self, ProtoError> {
        let envelope = body.strip_prefix(MAGIC).ok_or(ProtoError::ReadEnvelope {
            reason: "the body does not start with k8s\\0".to_owned(),
        })?;
        let unknown = Unknown::read(envelope)?;
        if !unknown.content_encoding.is_empty() {
            return Err(ProtoError::ReadEnvelope {
                reason: format!(
                    "content encoding {:?} is not supported",
                    unknown.content_encoding
                ),
            });
        }
        Ok(unknown)
    }

    fn read(bytes: &'a [u8]) -> Result<Self, ProtoError> {
        let bad = |reason: String| ProtoError::ReadEnvelope { reason };
        let text = |b: &[u8]| {
            String::from_utf8(b.to_vec()).map_err(|_| bad("a string is not UTF-8".to_owned()))
        };
        let mut unknown = Unknown {
            api_version: String::new(),
            kind: String::new(),
            raw: &[],
            content_encoding: String::new(),
        };
        let mut reader = Reader::new(bytes);
        while let Some((tag, wire)) = reader.field().map_err(bad)? {
            match (tag, wire) {
                (1, Wire::Bytes(type_meta)) => {
                    let mut inner = Reader::new(type_meta);
                    while let Some((tag, wire)) = inner.field().map_err(bad)? {
                        match (tag, wire) {
                            (1, Wire::Bytes(b)) => unknown.api_version = text(b)?,
                            (2, Wire::Bytes(b)) => unknown.kind = text(b)?,
                            _ => {}
                        }
                    }
                }
                (2, Wire::Bytes(raw)) => unknown.raw = raw,
                (3, Wire::Bytes(b)) => unknown.content_encoding = text(b)?,
                _ => {}
            }
        }
        if unknown.kind.is_empty() {
            return Err(bad("the envelope names no kind".to_owned()));
        }
        Ok(unknown)
    }
}
