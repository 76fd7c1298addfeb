//! The announcement's bytes: the last revision committed, and the group's events when they fit.
//!
//! `[0]` followed by the last revision (8 bytes, big-endian) says only "up to here committed":
//! receivers read the events from the log. `[1]`, the last revision, then each event
//! (revision, kind, create revision, key, value, previous value; lengths as 4 bytes) carries
//! the group itself, so receivers need no read at all when it follows what they have.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::super::wire::{put_bytes, take_bytes};
use crate::{Event, EventKind, Revision};

/// Groups larger than this are announced without their events (NATS's default payload limit
/// is 1 MiB).
const MAX_PAYLOAD: usize = 512 * 1024;

const BARE: u8 = 0;
const FULL: u8 = 1;

/// Encode an announcement of a group ending at `last`.
pub(crate) fn encode(last: Revision, events: &[Event]) -> Bytes {
    let size: usize = events
        .iter()
        .map(|e| 40 + e.key.len() + e.value.len() + e.prev_value.as_ref().map_or(0, Bytes::len))
        .sum();
    if events.is_empty() || size > MAX_PAYLOAD {
        let mut b = BytesMut::with_capacity(9);
        b.put_u8(BARE);
        b.put_i64(last);
        return b.freeze();
    }
    let mut b = BytesMut::with_capacity(9 + size);
    b.put_u8(FULL);
    b.put_i64(last);
    for e in events {
        b.put_i64(e.revision);
        b.put_u8(match e.kind {
            EventKind::Put => 0,
            EventKind::Delete => 1,
        });
        b.put_i64(e.create_revision);
        put_bytes(&mut b, e.key.as_bytes());
        put_bytes(&mut b, &e.value);
        match &e.prev_value {
            Some(p) => {
                b.put_u8(1);
                put_bytes(&mut b, p);
            }
            None => b.put_u8(0),
        }
    }
    b.freeze()
}

/// An announcement back: the last revision, and the events if it carries them. `None` for
/// bytes that are no announcement (ignored by the receiver, which still polls).
pub(crate) fn decode(mut payload: Bytes) -> Option<(Revision, Option<Vec<Event>>)> {
    if payload.remaining() < 9 {
        return None;
    }
    let tag = payload.get_u8();
    let last = payload.get_i64();
    match tag {
        BARE => Some((last, None)),
        FULL => {
            let mut events = Vec::new();
            while payload.has_remaining() {
                events.push(event(&mut payload)?);
            }
            let ends_at_last = events.last().map(|e| e.revision) == Some(last);
            ends_at_last.then_some((last, Some(events)))
        }
        _ => None,
    }
}

fn event(b: &mut Bytes) -> Option<Event> {
    if b.remaining() < 17 {
        return None;
    }
    let revision = b.get_i64();
    let kind = match b.get_u8() {
        0 => EventKind::Put,
        1 => EventKind::Delete,
        _ => return None,
    };
    let create_revision = b.get_i64();
    let key = String::from_utf8(take_bytes(b)?.to_vec()).ok()?;
    let value = take_bytes(b)?;
    if !b.has_remaining() {
        return None;
    }
    let prev_value = match b.get_u8() {
        0 => None,
        1 => Some(take_bytes(b)?),
        _ => return None,
    };
    Some(Event {
        revision,
        key,
        kind,
        value,
        prev_value,
        create_revision,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(revision: Revision, prev: Option<&str>) -> Event {
        Event {
            revision,
            key: format!("/k/{revision}"),
            kind: if prev.is_some() {
                EventKind::Delete
            } else {
                EventKind::Put
            },
            value: Bytes::from(format!("v{revision}")),
            prev_value: prev.map(|p| Bytes::from(p.to_owned())),
            create_revision: revision - 1,
        }
    }

    #[test]
    fn a_group_round_trips_and_a_large_one_goes_bare() {
        let events = vec![ev(7, None), ev(8, Some("old")), ev(9, Some(""))];
        assert_eq!(decode(encode(9, &events)), Some((9, Some(events))));
        let big = Event {
            value: Bytes::from(vec![b'x'; MAX_PAYLOAD + 1]),
            ..ev(3, None)
        };
        assert_eq!(decode(encode(3, &[big])), Some((3, None)));
        assert_eq!(decode(encode(4, &[])), Some((4, None)));
    }

    #[test]
    fn damaged_bytes_are_no_announcement() {
        let full = encode(9, &[ev(8, None), ev(9, None)]);
        for cut in [0, 5, 9, 20, full.len() - 1] {
            assert_eq!(decode(full.slice(..cut)), None, "cut at {cut}");
        }
        assert_eq!(decode(Bytes::from_static(&[7; 12])), None);
        // Events that do not end at the announced revision are refused too.
        assert_eq!(decode(encode(10, &[ev(8, None)])), None);
    }
}
