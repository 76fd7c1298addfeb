//! Kubernetes JSON to Kubernetes protobuf bytes, driven by the field table: the inverse of
//! [`decode`](super::decode).
//!
//! Every present JSON value is written (zeros included), so what Go decodes equals what the JSON
//! said. JSON keys the message does not know are ignored, as Go's decoder ignores them.

use base64::Engine as _;
use serde_json::Value;

use super::decode::target;
use super::names::{JsonNames, MessageNames, Placement};
use super::wellknown::WellKnown;
use crate::protobuf::table::{FieldMeta, MessageMeta, ProtoKind};
use crate::protobuf::wire::{
    put_bytes_field, put_fixed32_field, put_fixed64_field, put_varint_field,
};
use crate::protobuf::ProtoError;

/// Encodes messages, naming fields through `names`.
pub(crate) struct Encoder<'n> {
    pub names: &'n dyn JsonNames,
}

impl Encoder<'_> {
    /// Writes the fields of `meta` taken from `value` (no length prefix).
    pub fn message(
        &self,
        meta: &'static MessageMeta,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> Result<(), ProtoError> {
        if let Some(special) = WellKnown::of(meta.proto) {
            return special.encode(meta, value, self, out);
        }
        let object = match value {
            Value::Object(object) => object,
            Value::Null => return Ok(()),
            other => {
                return Err(encode_error(
                    meta,
                    format!("expected an object, found {other}"),
                ))
            }
        };
        let names = MessageNames::new(meta, self.names);
        for field in meta.fields {
            match names.placement(field) {
                // An embedded Go struct reads its own fields from the same object.
                Placement::Inline => self.nested(meta, field.tag, value, out)?,
                Placement::Named(name) => match object.get(name.as_ref()) {
                    None => {}
                    // Go writes a zero `metav1.Time` (JSON null) as an empty message.
                    Some(Value::Null) if is_time(field) => put_bytes_field(out, field.tag, &[]),
                    Some(Value::Null) => {}
                    Some(v) => self.field(meta, field, v, out)?,
                },
            }
        }
        Ok(())
    }

    /// Writes `value` as the message-typed field `tag` of `meta`, length-prefixed.
    pub fn nested(
        &self,
        meta: &'static MessageMeta,
        tag: u32,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> Result<(), ProtoError> {
        let field = meta
            .fields
            .iter()
            .find(|f| f.tag == tag)
            .ok_or_else(|| encode_error(meta, format!("the field table has no field {tag}")))?;
        let mut buf = Vec::new();
        self.message(target(meta, field)?, value, &mut buf)?;
        put_bytes_field(out, tag, &buf);
        Ok(())
    }

    fn field(
        &self,
        meta: &'static MessageMeta,
        field: &FieldMeta,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> Result<(), ProtoError> {
        let err = |want: &str| field_error(meta, field, format!("expected {want}, found {value}"));
        if let Some((_, value_kind)) = &field.map {
            let entries = value.as_object().ok_or_else(|| err("an object"))?;
            for (key, item) in entries {
                let mut entry = Vec::new();
                put_bytes_field(&mut entry, 1, key.as_bytes());
                self.single(meta, field, value_kind, 2, item, &mut entry)?;
                put_bytes_field(out, field.tag, &entry);
            }
        } else if field.repeated {
            // proto2 repeated scalars are unpacked in Kubernetes' Go code; write them the same way.
            for item in value.as_array().ok_or_else(|| err("a list"))? {
                self.single(meta, field, &field.kind, field.tag, item, out)?;
            }
        } else {
            self.single(meta, field, &field.kind, field.tag, value, out)?;
        }
        Ok(())
    }

    /// One scalar or message of `kind` as field `tag`.
    fn single(
        &self,
        meta: &'static MessageMeta,
        field: &FieldMeta,
        kind: &ProtoKind,
        tag: u32,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> Result<(), ProtoError> {
        let err = |want: &str| field_error(meta, field, format!("expected {want}, found {value}"));
        let int = |lo: i64, hi: i64| {
            value
                .as_i64()
                .filter(|i| (lo..=hi).contains(i))
                .ok_or_else(|| err("an integer in range"))
        };
        match kind {
            ProtoKind::Message => {
                let mut buf = Vec::new();
                self.message(target(meta, field)?, value, &mut buf)?;
                put_bytes_field(out, tag, &buf);
            }
            ProtoKind::String => put_bytes_field(
                out,
                tag,
                value.as_str().ok_or_else(|| err("a string"))?.as_bytes(),
            ),
            ProtoKind::Bytes => {
                let text = value.as_str().ok_or_else(|| err("a base64 string"))?;
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .map_err(|_| err("base64"))?;
                put_bytes_field(out, tag, &bytes);
            }
            ProtoKind::Bool => put_varint_field(
                out,
                tag,
                u64::from(value.as_bool().ok_or_else(|| err("a boolean"))?),
            ),
            ProtoKind::Int32 | ProtoKind::Enum => {
                put_varint_field(out, tag, int(i32::MIN.into(), i32::MAX.into())? as u64)
            }
            ProtoKind::Int64 => put_varint_field(out, tag, int(i64::MIN, i64::MAX)? as u64),
            ProtoKind::Uint32 => put_varint_field(out, tag, int(0, u32::MAX.into())? as u64),
            ProtoKind::Uint64 => put_varint_field(
                out,
                tag,
                value.as_u64().ok_or_else(|| err("an unsigned integer"))?,
            ),
            ProtoKind::Double => put_fixed64_field(
                out,
                tag,
                value.as_f64().ok_or_else(|| err("a number"))?.to_bits(),
            ),
            ProtoKind::Float => {
                let f = value.as_f64().ok_or_else(|| err("a number"))? as f32;
                put_fixed32_field(out, tag, f.to_bits());
            }
        }
        Ok(())
    }
}

/// A singular `Time`/`MicroTime` field.
fn is_time(field: &FieldMeta) -> bool {
    let time = matches!(
        WellKnown::of(field.message),
        Some(WellKnown::Time | WellKnown::MicroTime)
    );
    time && !field.repeated && field.map.is_none()
}

pub(crate) fn encode_error(meta: &MessageMeta, reason: String) -> ProtoError {
    ProtoError::EncodeBody {
        message: meta.proto.to_owned(),
        reason,
    }
}

fn field_error(meta: &MessageMeta, field: &FieldMeta, reason: String) -> ProtoError {
    encode_error(meta, format!("field {}: {reason}", field.rust))
}
