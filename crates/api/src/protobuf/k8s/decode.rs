//! Kubernetes protobuf bytes to Kubernetes JSON, driven by the field table.

use std::cell::Cell;

use base64::Engine as _;
use serde_json::{Map, Number, Value};

use super::names::{JsonNames, MessageNames, Placement};
use super::wellknown::WellKnown;
use super::{find_message, is_packable};
use crate::limits::MAX_DEPTH;
use crate::protobuf::table::{FieldMeta, MessageMeta, ProtoKind};
use crate::protobuf::wire::{Reader, Wire};
use crate::protobuf::ProtoError;

/// Decodes messages, naming fields through `names`.
pub(crate) struct Decoder<'n> {
    pub names: &'n dyn JsonNames,
    /// How many messages deep the decoder is: bounded, since messages such as JSONSchemaProps
    /// hold themselves and each level is a few frames of this recursive decoder.
    depth: Cell<usize>,
}

/// What has been read for one field so far.
enum Slot {
    One(Value),
    Many(Vec<Value>),
    Entries(Map<String, Value>),
}

impl<'n> Decoder<'n> {
    /// A decoder at the top level.
    pub fn new(names: &'n dyn JsonNames) -> Self {
        Decoder {
            names,
            depth: Cell::new(0),
        }
    }

    /// One message as JSON (an object, or the special JSON form of a well-known type); nested
    /// at most [`MAX_DEPTH`] messages deep.
    pub fn message(&self, meta: &'static MessageMeta, bytes: &[u8]) -> Result<Value, ProtoError> {
        let depth = self.depth.get() + 1;
        if depth > MAX_DEPTH {
            return Err(decode_error(
                meta,
                format!("messages are nested more than {MAX_DEPTH} levels deep"),
            ));
        }
        self.depth.set(depth);
        let decoded = match WellKnown::of(meta.proto) {
            Some(special) => special.decode(meta, bytes, self),
            None => self.object(meta, bytes).map(Value::Object),
        };
        self.depth.set(depth - 1);
        decoded
    }

    /// The message stored in field `tag` of `meta` (used by the well-known types).
    pub fn nested(
        &self,
        meta: &'static MessageMeta,
        tag: u32,
        bytes: &[u8],
    ) -> Result<Value, ProtoError> {
        let field = meta
            .fields
            .iter()
            .find(|f| f.tag == tag)
            .ok_or_else(|| decode_error(meta, format!("the field table has no field {tag}")))?;
        self.message(target(meta, field)?, bytes)
    }

    fn object(
        &self,
        meta: &'static MessageMeta,
        bytes: &[u8],
    ) -> Result<Map<String, Value>, ProtoError> {
        let mut slots: Vec<Option<Slot>> = meta.fields.iter().map(|_| None).collect();
        let mut reader = Reader::new(bytes);
        while let Some((tag, wire)) = reader
            .field()
            .map_err(|reason| decode_error(meta, reason))?
        {
            // Unknown fields are skipped, as Go does: a newer client may send fields we lack.
            let Some(index) = meta.fields.iter().position(|f| f.tag == tag) else {
                continue;
            };
            let field = &meta.fields[index];
            let slot = &mut slots[index];
            if let Some((_, value_kind)) = &field.map {
                let (key, value) = self.map_entry(meta, field, value_kind, wire)?;
                match slot {
                    Some(Slot::Entries(map)) => {
                        map.insert(key, value);
                    }
                    _ => *slot = Some(Slot::Entries(Map::from_iter([(key, value)]))),
                }
            } else if field.repeated {
                let mut items = match slot.take() {
                    Some(Slot::Many(items)) => items,
                    _ => Vec::new(),
                };
                match wire {
                    Wire::Bytes(packed) if is_packable(&field.kind) => {
                        let mut inner = Reader::new(packed);
                        while !inner.is_empty() {
                            let wire = packed_item(&field.kind, &mut inner)
                                .map_err(|reason| field_error(meta, field, reason))?;
                            items.push(self.value(meta, field, &field.kind, wire)?);
                        }
                    }
                    wire => items.push(self.value(meta, field, &field.kind, wire)?),
                }
                *slot = Some(Slot::Many(items));
            } else {
                *slot = Some(Slot::One(self.value(meta, field, &field.kind, wire)?));
            }
        }

        let names = MessageNames::new(meta, self.names);
        let mut out = Map::new();
        for (field, slot) in meta.fields.iter().zip(slots) {
            let value = match slot {
                None => continue,
                Some(Slot::One(value)) => {
                    let scalar = !matches!(field.kind, ProtoKind::Message);
                    if scalar && is_zero(&value) && !names.keeps_zero(field) {
                        continue; // Go's omitempty
                    }
                    value
                }
                Some(Slot::Many(items)) => Value::Array(items),
                Some(Slot::Entries(map)) => Value::Object(map),
            };
            match (names.placement(field), value) {
                (Placement::Inline, Value::Object(inner)) => out.extend(inner),
                (Placement::Inline, _) => {
                    return Err(field_error(
                        meta,
                        field,
                        "an inlined field must be an object".to_owned(),
                    ));
                }
                (Placement::Named(name), value) => {
                    out.insert(name.into_owned(), value);
                }
            }
        }
        Ok(out)
    }

    /// One map entry: a message with the key in field 1 and the value in field 2.
    fn map_entry(
        &self,
        meta: &'static MessageMeta,
        field: &FieldMeta,
        value_kind: &ProtoKind,
        wire: Wire<'_>,
    ) -> Result<(String, Value), ProtoError> {
        let Wire::Bytes(entry) = wire else {
            return Err(field_error(
                meta,
                field,
                "a map entry must be length-delimited".to_owned(),
            ));
        };
        let (mut key, mut value) = (String::new(), None);
        let mut reader = Reader::new(entry);
        while let Some((tag, wire)) = reader
            .field()
            .map_err(|reason| field_error(meta, field, reason))?
        {
            match (tag, wire) {
                (1, Wire::Bytes(bytes)) => {
                    key = String::from_utf8(bytes.to_vec()).map_err(|_| {
                        field_error(meta, field, "a map key is not UTF-8".to_owned())
                    })?;
                }
                (2, wire) => value = Some(self.value(meta, field, value_kind, wire)?),
                _ => {}
            }
        }
        // A missing value is the type's zero value, as protobuf defines for maps.
        let value = match value {
            Some(value) => value,
            None if matches!(value_kind, ProtoKind::Message) => {
                self.message(target(meta, field)?, &[])?
            }
            None => self.value(meta, field, value_kind, zero_wire(value_kind))?,
        };
        Ok((key, value))
    }

    /// One scalar or message value of `kind`.
    fn value(
        &self,
        meta: &'static MessageMeta,
        field: &FieldMeta,
        kind: &ProtoKind,
        wire: Wire<'_>,
    ) -> Result<Value, ProtoError> {
        let mismatch = || {
            field_error(
                meta,
                field,
                format!("a {} cannot arrive as {wire:?}", kind_name(kind)),
            )
        };
        Ok(match (kind, wire) {
            (ProtoKind::String, Wire::Bytes(b)) => Value::String(
                String::from_utf8(b.to_vec())
                    .map_err(|_| field_error(meta, field, "string is not UTF-8".to_owned()))?,
            ),
            (ProtoKind::Bytes, Wire::Bytes(b)) => {
                Value::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            (ProtoKind::Message, Wire::Bytes(b)) => self.message(target(meta, field)?, b)?,
            (ProtoKind::Bool, Wire::Varint(v)) => Value::Bool(v != 0),
            // int32 and enums travel as sign-extended 64-bit varints.
            (ProtoKind::Int32 | ProtoKind::Enum, Wire::Varint(v)) => Value::from(v as i64 as i32),
            (ProtoKind::Int64, Wire::Varint(v)) => Value::from(v as i64),
            (ProtoKind::Uint32, Wire::Varint(v)) => Value::from(v as u32),
            (ProtoKind::Uint64, Wire::Varint(v)) => Value::from(v),
            (ProtoKind::Double, Wire::Fixed64(bits)) => float(f64::from_bits(bits)),
            (ProtoKind::Float, Wire::Fixed32(bits)) => float(f64::from(f32::from_bits(bits))),
            _ => return Err(mismatch()),
        })
    }
}

/// The table entry of the message type a field holds.
pub(crate) fn target(
    meta: &MessageMeta,
    field: &FieldMeta,
) -> Result<&'static MessageMeta, ProtoError> {
    find_message(field.message).ok_or_else(|| ProtoError::UnknownMessage {
        message: field.message.to_owned(),
        context: format!("{}.{}", meta.proto, field.rust),
    })
}

fn packed_item<'a>(kind: &ProtoKind, reader: &mut Reader<'a>) -> Result<Wire<'a>, String> {
    let mut fixed = |n: usize| -> Result<u64, String> {
        (0..n).try_fold(0u64, |acc, i| {
            let byte = reader.byte()?;
            Ok(acc | u64::from(byte) << (8 * i))
        })
    };
    Ok(match kind {
        ProtoKind::Double => Wire::Fixed64(fixed(8)?),
        ProtoKind::Float => Wire::Fixed32(fixed(4)? as u32),
        _ => Wire::Varint(reader.varint()?),
    })
}

fn kind_name(kind: &ProtoKind) -> &'static str {
    match kind {
        ProtoKind::String => "string",
        ProtoKind::Bytes => "bytes",
        ProtoKind::Bool => "bool",
        ProtoKind::Int32 => "int32",
        ProtoKind::Int64 => "int64",
        ProtoKind::Uint32 => "uint32",
        ProtoKind::Uint64 => "uint64",
        ProtoKind::Double => "double",
        ProtoKind::Float => "float",
        ProtoKind::Enum => "enum",
        ProtoKind::Message => "message",
    }
}

fn zero_wire(kind: &ProtoKind) -> Wire<'static> {
    match kind {
        ProtoKind::String | ProtoKind::Bytes | ProtoKind::Message => Wire::Bytes(&[]),
        ProtoKind::Double => Wire::Fixed64(0),
        ProtoKind::Float => Wire::Fixed32(0),
        _ => Wire::Varint(0),
    }
}

/// NaN and infinities have no JSON form; Go's encoder refuses them, here they become null.
fn float(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

fn is_zero(value: &Value) -> bool {
    match value {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Null => true,
        Value::Array(_) | Value::Object(_) => false,
    }
}

pub(crate) fn decode_error(meta: &MessageMeta, reason: String) -> ProtoError {
    ProtoError::DecodeBody {
        message: meta.proto.to_owned(),
        reason,
    }
}

fn field_error(meta: &MessageMeta, field: &FieldMeta, reason: String) -> ProtoError {
    decode_error(
        meta,
        format!("field {} ({}): {reason}", field.rust, field.tag),
    )
}
