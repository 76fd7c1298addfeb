//! The bytes of a handed-on write and of its answer.
//!
//! A write: its kind (`0` create, `1` update, `2` delete), the expected mod revision (8 bytes,
//! big-endian), the key, the value's head, then `1` and its tail, or `0` for a fixed value
//! (lengths as 4 bytes). Only a [`Render::splice`](crate::Render::splice) or
//! [`Render::fixed`](crate::Render::fixed) value can be sent.
//!
//! Writes travel in [`frame`]s of several, and their answers in one frame, in the same order.
//!
//! An answer: a tag, then what it needs. The value of a write that was done is not sent back:
//! the sender renders it from its own copy, which gives the same bytes.

use bytes::{Buf, BufMut, Bytes, BytesMut};

use super::super::wire::{put_bytes, take_bytes, take_u8};
use crate::batch::Op;
use crate::{Error, Record, Render};

const CREATE: u8 = 0;
const UPDATE: u8 = 1;
const DELETE: u8 = 2;

const DONE: u8 = 0;
const EXISTS: u8 = 1;
const MISSING: u8 = 2;
const CONFLICT: u8 = 3;
const NOT_TAKEN: u8 = 4;
const ROLLED_BACK: u8 = 5;
const UNKNOWN: u8 = 6;

/// `op` as bytes, or `None` if its value is made by a function (committed where it was made).
pub(crate) fn encode_op(op: &Op) -> Option<Bytes> {
    let (tag, key, expected, render) = match op {
        Op::Create { key, render } => (CREATE, key, 0, render),
        Op::Update {
            key,
            expected,
            render,
        } => (UPDATE, key, *expected, render),
        Op::Delete {
            key,
            expected,
            render,
        } => (DELETE, key, *expected, render),
    };
    let (head, tail) = render.parts()?;
    let size = 22 + key.len() + head.len() + tail.map_or(0, Bytes::len);
    let mut b = BytesMut::with_capacity(size);
    b.put_u8(tag);
    b.put_i64(expected);
    put_bytes(&mut b, key.as_bytes());
    put_bytes(&mut b, head);
    match tail {
        Some(t) => {
            b.put_u8(1);
            put_bytes(&mut b, t);
        }
        None => b.put_u8(0),
    }
    Some(b.freeze())
}

/// A write back from its bytes; `None` for bytes that are not one.
pub(crate) fn decode_op(mut b: Bytes) -> Option<Op> {
    if b.remaining() < 9 {
        return None;
    }
    let tag = b.get_u8();
    let expected = b.get_i64();
    let key = String::from_utf8(take_bytes(&mut b)?.to_vec()).ok()?;
    let head = take_bytes(&mut b)?;
    let render = match take_u8(&mut b)? {
        0 => Render::fixed(head),
        1 => Render::splice(head, take_bytes(&mut b)?),
        _ => return None,
    };
    if b.has_remaining() {
        return None;
    }
    Some(match tag {
        CREATE => Op::Create { key, render },
        UPDATE => Op::Update {
            key,
            expected,
            render,
        },
        DELETE => Op::Delete {
            key,
            expected,
            render,
        },
        _ => return None,
    })
}

/// What the committing replica answers.
pub(crate) enum Answer {
    /// It took the write: the outcome, the value of a done write still to be rendered by the
    /// sender (its `value` is empty).
    Taken(Result<Record, Error>),
    /// It did not take the write (it no longer commits for the others): commit it here.
    NotTaken,
}

/// The answer to a taken write; `None` means it was not taken.
pub(crate) fn encode_answer(outcome: Option<&Result<Record, Error>>) -> Bytes {
    let mut b = BytesMut::new();
    match outcome {
        None => b.put_u8(NOT_TAKEN),
        Some(Ok(rec)) => {
            b.put_u8(DONE);
            b.put_i64(rec.create_revision);
            b.put_i64(rec.mod_revision);
        }
        Some(Err(Error::AlreadyExists { .. })) => b.put_u8(EXISTS),
        Some(Err(Error::NotFound { .. })) => b.put_u8(MISSING),
        Some(Err(Error::Conflict { current, .. })) => {
            b.put_u8(CONFLICT);
            if let Some(rec) = current {
                b.put_i64(rec.create_revision);
                b.put_i64(rec.mod_revision);
                put_bytes(&mut b, &rec.value);
            }
        }
        Some(Err(e @ Error::CommitUnknown { .. })) => {
            b.put_u8(UNKNOWN);
            b.put_slice(chain(e).as_bytes());
        }
        Some(Err(e)) => {
            b.put_u8(ROLLED_BACK);
            b.put_slice(chain(e).as_bytes());
        }
    }
    b.freeze()
}

/// An answer back, for the write of `key`; `None` for bytes that are not one.
pub(crate) fn decode_answer(mut b: Bytes, key: &str) -> Option<Answer> {
    let key = key.to_owned();
    let outcome = match take_u8(&mut b)? {
        NOT_TAKEN => return Some(Answer::NotTaken),
        DONE => {
            if b.remaining() != 16 {
                return None;
            }
            Ok(Record {
                key,
                create_revision: b.get_i64(),
                mod_revision: b.get_i64(),
                value: Bytes::new(),
            })
        }
        EXISTS => Err(Error::AlreadyExists { key }),
        MISSING => Err(Error::NotFound { key }),
        CONFLICT => {
            let current = if b.has_remaining() {
                if b.remaining() < 16 {
                    return None;
                }
                let (create_revision, mod_revision) = (b.get_i64(), b.get_i64());
                Some(Record {
                    key: key.clone(),
                    create_revision,
                    mod_revision,
                    value: take_bytes(&mut b)?,
                })
            } else {
                None
            };
            Err(Error::Conflict { key, current })
        }
        UNKNOWN => Err(Error::CommitUnknown {
            source: Error::source_of(Remote(text(b))),
        }),
        ROLLED_BACK => Err(Error::CommitTxn {
            source: Error::source_of(Remote(text(b))),
        }),
        _ => return None,
    };
    Some(Answer::Taken(outcome))
}

/// What the committing replica said went wrong.
#[derive(Debug)]
pub(crate) struct Remote(pub String);

impl std::fmt::Display for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "on the replica that commits: {}", self.0)
    }
}

impl std::error::Error for Remote {}

/// An error and its sources, as one line.
fn chain(e: &Error) -> String {
    let mut line = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        line.push_str(": ");
        line.push_str(&s.to_string());
        source = s.source();
    }
    line
}

fn text(b: Bytes) -> String {
    String::from_utf8_lossy(&b).into_owned()
}

/// Several writes (or their answers) as one message: their count (4 bytes), then each.
pub(crate) fn frame(parts: &[Bytes]) -> Bytes {
    let size: usize = parts.iter().map(|p| 4 + p.len()).sum();
    let mut b = BytesMut::with_capacity(4 + size);
    b.put_u32(u32::try_from(parts.len()).unwrap_or(u32::MAX));
    for p in parts {
        put_bytes(&mut b, p);
    }
    b.freeze()
}

/// What [`frame`] made, back; `None` for bytes that are not a frame.
pub(crate) fn unframe(mut b: Bytes) -> Option<Vec<Bytes>> {
    if b.remaining() < 4 {
        return None;
    }
    let n = b.get_u32() as usize;
    let mut parts = Vec::with_capacity(n.min(4096));
    for _ in 0..n {
        parts.push(take_bytes(&mut b)?);
    }
    (!b.has_remaining()).then_some(parts)
}

#[cfg(test)]
mod tests;
