//! The protobuf wire format at its lowest level: varints, field keys and length-delimited bytes.
//!
//! Kubernetes objects are decoded from a field table at run time rather than from generated
//! structs, so this reads and writes raw fields. Groups (wire types 3 and 4) are rejected: proto2
//! allows them but no Kubernetes message uses them.

/// One field's value as it sits on the wire.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Wire<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1.
    Fixed64(u64),
    /// Wire type 2: strings, bytes, messages, map entries and packed scalars.
    Bytes(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

/// Reads the fields of one message in order.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The next `(field number, value)`, or `None` at the end of the message.
    pub fn field(&mut self) -> Result<Option<(u32, Wire<'a>)>, String> {
        if self.buf.is_empty() {
            return Ok(None);
        }
        let key = self.varint()?;
        let tag =
            u32::try_from(key >> 3).map_err(|_| format!("field number {} too large", key >> 3))?;
        if tag == 0 {
            return Err("field number 0".to_owned());
        }
        let value = match key & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => Wire::Fixed64(u64::from_le_bytes(self.take_array()?)),
            2 => {
                let len =
                    usize::try_from(self.varint()?).map_err(|_| "length overflows".to_owned())?;
                Wire::Bytes(self.take(len)?)
            }
            5 => Wire::Fixed32(u32::from_le_bytes(self.take_array()?)),
            other => return Err(format!("unsupported wire type {other} for field {tag}")),
        };
        Ok(Some((tag, value)))
    }

    /// A base-128 varint.
    pub fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for (i, byte) in self.buf.iter().enumerate().take(10) {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                self.buf = &self.buf[i + 1..];
                return Ok(value);
            }
        }
        Err("truncated or overlong varint".to_owned())
    }

    /// One raw byte (for packed fixed-width values).
    pub fn byte(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], String> {
        if len > self.buf.len() {
            return Err(format!("{len} bytes announced, {} left", self.buf.len()));
        }
        let (head, tail) = self.buf.split_at(len);
        self.buf = tail;
        Ok(head)
    }

    fn take_array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let bytes = self.take(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        Ok(out)
    }
}

// === Writing ===

pub(crate) fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A varint field (bools, integers; negative int32/int64 as ten-byte two's complement).
pub(crate) fn put_varint_field(out: &mut Vec<u8>, tag: u32, value: u64) {
    put_varint(out, u64::from(tag) << 3);
    put_varint(out, value);
}

/// A length-delimited field.
pub(crate) fn put_bytes_field(out: &mut Vec<u8>, tag: u32, bytes: &[u8]) {
    put_varint(out, (u64::from(tag) << 3) | 2);
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// A 64-bit fixed field (`double`).
pub(crate) fn put_fixed64_field(out: &mut Vec<u8>, tag: u32, value: u64) {
    put_varint(out, (u64::from(tag) << 3) | 1);
    out.extend_from_slice(&value.to_le_bytes());
}

/// A 32-bit fixed field (`float`).
pub(crate) fn put_fixed32_field(out: &mut Vec<u8>, tag: u32, value: u32) {
    put_varint(out, (u64::from(tag) << 3) | 5);
    out.extend_from_slice(&value.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip() {
        let mut out = Vec::new();
        put_varint_field(&mut out, 1, 300);
        put_varint_field(&mut out, 2, -5i64 as u64);
        put_bytes_field(&mut out, 17, b"abc");
        put_fixed64_field(&mut out, 3, 1.5f64.to_bits());
        put_fixed32_field(&mut out, 4, 7);
        let mut r = Reader::new(&out);
        assert_eq!(r.field(), Ok(Some((1, Wire::Varint(300)))));
        assert_eq!(r.field(), Ok(Some((2, Wire::Varint(-5i64 as u64)))));
        assert_eq!(r.field(), Ok(Some((17, Wire::Bytes(b"abc")))));
        assert_eq!(r.field(), Ok(Some((3, Wire::Fixed64(1.5f64.to_bits())))));
        assert_eq!(r.field(), Ok(Some((4, Wire::Fixed32(7)))));
        assert_eq!(r.field(), Ok(None));
    }

    #[test]
    fn malformed_input_is_an_error() {
        assert!(Reader::new(&[0x0a, 0x05, b'a']).field().is_err()); // length past the end
        assert!(Reader::new(&[0x08, 0xff]).field().is_err()); // truncated varint
        assert!(Reader::new(&[0x0b]).field().is_err()); // group start
        assert!(Reader::new(&[0x00, 0x01]).field().is_err()); // field 0
    }
}
