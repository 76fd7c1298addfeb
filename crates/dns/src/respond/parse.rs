//! Reading queries: by hand for plain ones, with hickory-proto for the rest.

use std::borrow::Cow;

use hickory_proto::op::{Message, MessageType, OpCode};
use hickory_proto::rr::rdata::opt::{EdnsCode, EdnsOption};

use super::{rcode, Ecs};
use crate::geo::ip_bits;
use crate::wire::{OPTION_ECS, TYPE_OPT};

/// A question ready to answer.
pub(crate) struct Question<'a> {
    pub(crate) id: u16,
    /// RD (0x0100) and CD (0x0010) of the query, copied to the response.
    pub(crate) copied_flags: u16,
    /// The question as sent: name (original case), type, class.
    pub(crate) raw: Cow<'a, [u8]>,
    pub(crate) lower: [u8; 256],
    pub(crate) lower_len: usize,
    pub(crate) qtype: u16,
    pub(crate) qclass: u16,
    pub(crate) edns: Option<EdnsInfo>,
}

impl Question<'_> {
    /// The lowercased wire name.
    #[inline]
    pub(crate) fn name(&self) -> &[u8] {
        &self.lower[..self.lower_len]
    }
}

/// EDNS of a query.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EdnsInfo {
    pub(crate) payload: u16,
    pub(crate) version: u8,
    pub(crate) dnssec_ok: bool,
    pub(crate) ecs: Option<Ecs>,
}

/// What a packet turned out to be.
// The question lives on the stack on purpose: boxing it would cost an allocation per query.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Parsed<'a> {
    Query(Question<'a>),
    /// Not answered at all.
    Drop,
    /// Answered with this rcode and no question.
    Error {
        rcode: u16,
    },
}

#[inline]
fn u16_at(p: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([p[at], p[at + 1]])
}

/// The hand parser: `None` when the packet needs the general path.
#[inline]
pub(crate) fn parse_fast(p: &[u8]) -> Option<Parsed<'_>> {
    if p.len() < 12 || p[2] & 0x80 != 0 {
        return Some(Parsed::Drop);
    }
    let opcode = (p[2] >> 3) & 0x0f;
    let (qd, an, ns, ar) = (u16_at(p, 4), u16_at(p, 6), u16_at(p, 8), u16_at(p, 10));
    if opcode != 0 || qd != 1 || an != 0 || ns != 0 || ar > 1 {
        return None;
    }
    let mut question = Question {
        id: u16_at(p, 0),
        copied_flags: u16_at(p, 2) & 0x0110,
        raw: Cow::Borrowed(&[]),
        lower: [0; 256],
        lower_len: 0,
        qtype: 0,
        qclass: 0,
        edns: None,
    };
    let mut pos = 12;
    loop {
        let len = *p.get(pos)? as usize;
        if len == 0 {
            question.lower[pos - 12] = 0;
            pos += 1;
            break;
        }
        if len > 63 || pos + 1 + len >= p.len() || pos - 12 + 1 + len >= 255 {
            return None;
        }
        let at = pos - 12;
        question.lower[at] = len as u8;
        for i in 0..len {
            question.lower[at + 1 + i] = p[pos + 1 + i].to_ascii_lowercase();
        }
        pos += 1 + len;
    }
    question.lower_len = pos - 12;
    if pos + 4 > p.len() {
        return None;
    }
    question.qtype = u16_at(p, pos);
    question.qclass = u16_at(p, pos + 2);
    question.raw = Cow::Borrowed(&p[12..pos + 4]);
    pos += 4;
    if ar == 1 {
        // OPT: root owner, TYPE 41, CLASS = payload, TTL = ext-rcode, version, flags; RDLENGTH
        if pos + 11 > p.len() || p[pos] != 0 || u16_at(p, pos + 1) != TYPE_OPT {
            return None;
        }
        let rdlen = u16_at(p, pos + 9) as usize;
        let end = pos + 11 + rdlen;
        if end != p.len() {
            return None;
        }
        let mut opt = pos + 11;
        while opt < end {
            if opt + 4 > end {
                return None;
            }
            let (code, len) = (u16_at(p, opt), u16_at(p, opt + 2) as usize);
            if code == OPTION_ECS || opt + 4 + len > end {
                return None;
            }
            opt += 4 + len;
        }
        question.edns = Some(EdnsInfo {
            payload: u16_at(p, pos + 3),
            version: p[pos + 6],
            dnssec_ok: p[pos + 7] & 0x80 != 0,
            ecs: None,
        });
    } else if pos != p.len() {
        return None;
    }
    Some(Parsed::Query(question))
}

/// The hickory-proto path: anything the hand parser declined.
pub(crate) fn parse_general(p: &[u8]) -> Parsed<'static> {
    if p.len() < 12 || p[2] & 0x80 != 0 {
        return Parsed::Drop;
    }
    let message = match Message::from_vec(p) {
        Ok(message) => message,
        Err(_) => {
            return Parsed::Error {
                rcode: rcode::FORMERR,
            }
        }
    };
    if message.metadata.message_type != MessageType::Query {
        return Parsed::Drop;
    }
    if message.metadata.op_code != OpCode::Query {
        return Parsed::Error {
            rcode: rcode::NOTIMP,
        };
    }
    let [query] = message.queries.as_slice() else {
        return Parsed::Error {
            rcode: rcode::FORMERR,
        };
    };
    let mut raw = Vec::with_capacity(64);
    let mut lower = [0u8; 256];
    for label in query.name().iter() {
        if raw.len() + 1 + label.len() >= 255 {
            return Parsed::Error {
                rcode: rcode::FORMERR,
            };
        }
        lower[raw.len()] = label.len() as u8;
        raw.push(label.len() as u8);
        for &b in label {
            lower[raw.len()] = b.to_ascii_lowercase();
            raw.push(b);
        }
    }
    raw.push(0);
    let lower_len = raw.len();
    raw.extend_from_slice(&u16::from(query.query_type()).to_be_bytes());
    raw.extend_from_slice(&u16::from(query.query_class()).to_be_bytes());
    let edns = message.edns.as_ref().map(|edns| EdnsInfo {
        payload: edns.max_payload(),
        version: edns.version(),
        dnssec_ok: edns.flags().dnssec_ok,
        ecs: match edns.option(EdnsCode::Subnet) {
            Some(EdnsOption::Subnet(subnet)) => {
                let (bits, width) = ip_bits(subnet.addr());
                Some(Ecs {
                    family: if width == 32 { 1 } else { 2 },
                    source: subnet.source_prefix().min(width),
                    bits: crate::geo::mask(bits, subnet.source_prefix().min(width), width),
                    width,
                })
            }
            _ => None,
        },
    });
    Parsed::Query(Question {
        id: message.metadata.id,
        copied_flags: u16_at(p, 2) & 0x0110,
        raw: Cow::Owned(raw),
        lower,
        lower_len,
        qtype: u16::from(query.query_type()),
        qclass: u16::from(query.query_class()),
        edns,
    })
}
