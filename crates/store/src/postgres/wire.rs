//! The few pieces of binary framing the NATS messages between replicas share
//! ([`peers`](super::peers) announcements, [`forward`](super::forward)ed writes).

use bytes::{Buf, BufMut, Bytes, BytesMut};

/// `data` after its length (4 bytes, big-endian).
pub(super) fn put_bytes(b: &mut BytesMut, data: &[u8]) {
    b.put_u32(u32::try_from(data.len()).unwrap_or(u32::MAX));
    b.put_slice(data);
}

/// What [`put_bytes`] wrote; `None` if `b` is too short.
pub(super) fn take_bytes(b: &mut Bytes) -> Option<Bytes> {
    if b.remaining() < 4 {
        return None;
    }
    let n = b.get_u32() as usize;
    (b.remaining() >= n).then(|| b.split_to(n))
}

/// One byte; `None` if `b` is empty.
pub(super) fn take_u8(b: &mut Bytes) -> Option<u8> {
    b.has_remaining().then(|| b.get_u8())
}
