//! Messages whose JSON form is not an object of their fields.
//!
//! Go gives these types custom JSON marshalling, so their protobuf messages are read by hand:
//! times and durations become strings, `Quantity` its string, `IntOrString` a number or string,
//! raw-JSON holders (`RawExtension`, `FieldsV1`, apiextensions `JSON`) their embedded JSON, Go
//! named slices (`ExtraValue`, `Verbs`) a bare array, and apiextensions' `JSONSchemaPropsOr*`
//! whichever of their alternatives is set.

use serde_json::Value;

use super::decode::{decode_error, Decoder};
use super::encode::{encode_error, Encoder};
use super::go_fields::SLICE_MESSAGES;
use super::time::{format_go_duration, format_rfc3339, parse_go_duration, parse_rfc3339};
use crate::protobuf::table::MessageMeta;
use crate::protobuf::wire::{put_bytes_field, put_varint_field, Reader, Wire};
use crate::protobuf::ProtoError;

const META_V1: &str = "k8s.io.apimachinery.pkg.apis.meta.v1.";
const APIEXTENSIONS: &str = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.";

/// A message with a hand-written JSON form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WellKnown {
    /// `metav1.Time`: `seconds`=1, `nanos`=2; RFC 3339 to the second.
    Time,
    /// `metav1.MicroTime`: as `Time`, to the microsecond.
    MicroTime,
    /// `metav1.Duration`: `duration`=1 in nanoseconds; Go's duration string.
    Duration,
    /// `resource.Quantity`: `string`=1.
    Quantity,
    /// `intstr.IntOrString`: `type`=1 (0 int, 1 string), `intVal`=2, `strVal`=3.
    IntOrString,
    /// `raw`=1 holding JSON bytes.
    RawJson,
    /// A Go named slice: `items`=1.
    Slice,
    /// `JSONSchemaPropsOrArray`: `schema`=1 or `jSONSchemas`=2.
    SchemaOrArray,
    /// `JSONSchemaPropsOrBool`: `allows`=1 or `schema`=2.
    SchemaOrBool,
    /// `JSONSchemaPropsOrStringArray`: `schema`=1 or `property`=2.
    SchemaOrStringArray,
}

impl WellKnown {
    /// The special form of a proto message, if it has one. Names compare case-insensitively
    /// (prost spells `JSON` as `Json`).
    pub fn of(proto: &str) -> Option<Self> {
        let lower = proto.to_ascii_lowercase();
        let meta = lower.strip_prefix(META_V1);
        let apiext = lower
            .strip_prefix(APIEXTENSIONS)
            .and_then(|rest| rest.split_once('.'))
            .map(|(_, name)| name);
        Some(match (meta, apiext, lower.as_str()) {
            (Some("time"), _, _) => WellKnown::Time,
            (Some("microtime"), _, _) => WellKnown::MicroTime,
            (Some("duration"), _, _) => WellKnown::Duration,
            (Some("fieldsv1"), _, _) | (_, Some("json"), _) => WellKnown::RawJson,
            (_, Some("jsonschemapropsorarray"), _) => WellKnown::SchemaOrArray,
            (_, Some("jsonschemapropsorbool"), _) => WellKnown::SchemaOrBool,
            (_, Some("jsonschemapropsorstringarray"), _) => WellKnown::SchemaOrStringArray,
            (_, _, "k8s.io.apimachinery.pkg.api.resource.quantity") => WellKnown::Quantity,
            (_, _, "k8s.io.apimachinery.pkg.api.resource.quantityvalue") => WellKnown::Quantity,
            (_, _, "k8s.io.apimachinery.pkg.util.intstr.intorstring") => WellKnown::IntOrString,
            (_, _, "k8s.io.apimachinery.pkg.runtime.rawextension") => WellKnown::RawJson,
            (_, _, name) if SLICE_MESSAGES.binary_search(&name).is_ok() => WellKnown::Slice,
            _ => return None,
        })
    }

    pub fn decode(
        self,
        meta: &'static MessageMeta,
        bytes: &[u8],
        dec: &Decoder<'_>,
    ) -> Result<Value, ProtoError> {
        let fields = Fields::read(meta, bytes)?;
        let text = |tag| fields.string(meta, tag);
        Ok(match self {
            WellKnown::Time | WellKnown::MicroTime if bytes.is_empty() => Value::Null, // Go's zero time
            WellKnown::Time | WellKnown::MicroTime => {
                let nanos = fields.int(2) as i32;
                Value::String(format_rfc3339(
                    fields.int(1),
                    nanos,
                    self == WellKnown::MicroTime,
                ))
            }
            WellKnown::Duration => Value::String(format_go_duration(fields.int(1))),
            WellKnown::Quantity => match text(1)? {
                s if s.is_empty() => Value::String("0".to_owned()),
                s => Value::String(s),
            },
            WellKnown::IntOrString => match fields.int(1) {
                1 => Value::String(text(3)?),
                _ => Value::from(fields.int(2) as i32),
            },
            WellKnown::RawJson => match fields.bytes(1).last() {
                None => Value::Null,
                Some([]) => Value::Null,
                Some(raw) => serde_json::from_slice(raw)
                    .map_err(|e| decode_error(meta, format!("embedded JSON: {e}")))?,
            },
            WellKnown::Slice => Value::Array(
                fields
                    .strings(meta, 1)?
                    .into_iter()
                    .map(Value::String)
                    .collect(),
            ),
            WellKnown::SchemaOrArray => match fields.bytes(1).last() {
                Some(schema) => dec.nested(meta, 1, schema)?,
                None => Value::Array(
                    fields
                        .bytes(2)
                        .iter()
                        .map(|b| dec.nested(meta, 2, b))
                        .collect::<Result<_, _>>()?,
                ),
            },
            WellKnown::SchemaOrBool => match fields.bytes(2).last() {
                Some(schema) => dec.nested(meta, 2, schema)?,
                None => Value::Bool(fields.int(1) != 0),
            },
            WellKnown::SchemaOrStringArray => match fields.bytes(1).last() {
                Some(schema) => dec.nested(meta, 1, schema)?,
                None => Value::Array(
                    fields
                        .strings(meta, 2)?
                        .into_iter()
                        .map(Value::String)
                        .collect(),
                ),
            },
        })
    }

    pub fn encode(
        self,
        meta: &'static MessageMeta,
        value: &Value,
        enc: &Encoder<'_>,
        out: &mut Vec<u8>,
    ) -> Result<(), ProtoError> {
        let wrong = |want: &str| encode_error(meta, format!("expected {want}, found {value}"));
        // A JSON list of strings as the repeated string field `tag` (Go's `[]string`).
        let put_strings = |out: &mut Vec<u8>, tag, items: &[Value]| {
            for item in items {
                let s = item.as_str().ok_or_else(|| wrong("a list of strings"))?;
                put_bytes_field(out, tag, s.as_bytes());
            }
            Ok::<_, ProtoError>(())
        };
        match (self, value) {
            (_, Value::Null) => {}
            (WellKnown::Time | WellKnown::MicroTime, Value::String(s)) => {
                let (seconds, nanos) = parse_rfc3339(s).ok_or_else(|| wrong("an RFC 3339 time"))?;
                put_varint_field(out, 1, seconds as u64);
                put_varint_field(out, 2, i64::from(nanos) as u64);
            }
            (WellKnown::Duration, Value::String(s)) => {
                let nanos =
                    parse_go_duration(s).ok_or_else(|| wrong("a duration such as 1h30m"))?;
                put_varint_field(out, 1, nanos as u64);
            }
            (WellKnown::Quantity, Value::String(s)) => put_bytes_field(out, 1, s.as_bytes()),
            (WellKnown::Quantity, Value::Number(n)) => {
                put_bytes_field(out, 1, n.to_string().as_bytes())
            }
            (WellKnown::IntOrString, Value::Number(n)) => {
                let int = n
                    .as_i64()
                    .and_then(|i| i32::try_from(i).ok())
                    .ok_or_else(|| wrong("a 32-bit integer"))?;
                put_varint_field(out, 1, 0);
                put_varint_field(out, 2, i64::from(int) as u64);
                put_bytes_field(out, 3, b"");
            }
            (WellKnown::IntOrString, Value::String(s)) => {
                put_varint_field(out, 1, 1);
                put_varint_field(out, 2, 0);
                put_bytes_field(out, 3, s.as_bytes());
            }
            (WellKnown::RawJson, v) => put_bytes_field(out, 1, v.to_string().as_bytes()),
            (WellKnown::Slice, Value::Array(items)) => put_strings(out, 1, items)?,
            (WellKnown::SchemaOrArray | WellKnown::SchemaOrStringArray, Value::Object(_)) => {
                enc.nested(meta, 1, value, out)?
            }
            (WellKnown::SchemaOrArray, Value::Array(items)) => {
                for item in items {
                    enc.nested(meta, 2, item, out)?;
                }
            }
            (WellKnown::SchemaOrStringArray, Value::Array(items)) => put_strings(out, 2, items)?,
            (WellKnown::SchemaOrBool, Value::Bool(b)) => put_varint_field(out, 1, u64::from(*b)),
            (WellKnown::SchemaOrBool, Value::Object(_)) => {
                put_varint_field(out, 1, 1);
                enc.nested(meta, 2, value, out)?;
            }
            (kind, _) => return Err(wrong(&format!("the JSON form of {kind:?}"))),
        }
        Ok(())
    }
}

/// The raw fields of a small message, by field number.
struct Fields<'a> {
    fields: Vec<(u32, Wire<'a>)>,
}

impl<'a> Fields<'a> {
    fn read(meta: &MessageMeta, bytes: &'a [u8]) -> Result<Self, ProtoError> {
        let mut reader = Reader::new(bytes);
        let mut fields = Vec::new();
        while let Some(field) = reader
            .field()
            .map_err(|reason| decode_error(meta, reason))?
        {
            fields.push(field);
        }
        Ok(Fields { fields })
    }

    /// The last varint in field `tag` (proto's last-one-wins), or 0.
    fn int(&self, tag: u32) -> i64 {
        let last = self.fields.iter().rev().find_map(|(t, w)| match w {
            Wire::Varint(v) if *t == tag => Some(*v as i64),
            _ => None,
        });
        last.unwrap_or(0)
    }

    /// Every length-delimited value in field `tag`, in order.
    fn bytes(&self, tag: u32) -> Vec<&'a [u8]> {
        self.fields
            .iter()
            .filter_map(|(t, w)| match w {
                Wire::Bytes(b) if *t == tag => Some(*b),
                _ => None,
            })
            .collect()
    }

    fn strings(&self, meta: &MessageMeta, tag: u32) -> Result<Vec<String>, ProtoError> {
        self.bytes(tag)
            .into_iter()
            .map(|b| {
                String::from_utf8(b.to_vec())
                    .map_err(|_| decode_error(meta, format!("field {tag} is not UTF-8")))
            })
            .collect()
    }

    fn string(&self, meta: &MessageMeta, tag: u32) -> Result<String, ProtoError> {
        Ok(self.strings(meta, tag)?.pop().unwrap_or_default())
    }
}
