//! Writing a response from pre-encoded records.

use std::net::IpAddr;

use super::parse::Question;
use super::{rcode, Outcome, Worker};
use crate::geo::{ip_bits, mask};
use crate::snapshot::{AddrSet, Node, Pick, Rrset, Snapshot};
use crate::wire::{
    CLASS_ANY, CLASS_IN, EDNS_PAYLOAD, OPTION_ECS, TYPE_A, TYPE_AAAA, TYPE_ANY, TYPE_CNAME,
    TYPE_NS, TYPE_OPT,
};

/// Longest CNAME chain followed (cluster → region → global is two).
const MAX_CHAIN: usize = 8;

/// Who asks: the ECS subnet when sent, else the source address; what the answer looked at.
struct Client {
    bits: u128,
    width: u8,
    /// Bits of the address that may be used (ECS source prefix, or the full width).
    prefix: u8,
    /// Longest prefix a lookup matched.
    scope: u8,
    /// The answer depended on the client.
    dependent: bool,
    /// A lookup found nothing, so the answer holds for the sent subnet only.
    missed: bool,
}

impl Client {
    fn local(&mut self, snapshot: &Snapshot) -> Option<u16> {
        self.dependent = true;
        for &(net, width, len, cluster) in &snapshot.local_nets {
            if width == self.width && len <= self.prefix && mask(self.bits, len, width) == net {
                self.scope = self.scope.max(len);
                return Some(cluster);
            }
        }
        // not in any network: the answer holds as far as the client's subnet stays clear of them
        for &(net, width, len, _) in &snapshot.local_nets {
            if width == self.width {
                let common = ((self.bits ^ net) << (128 - width as u32)).leading_zeros() as u8;
                self.scope = self.scope.max((common.min(width) + 1).min(len));
            }
        }
        None
    }

    fn region(&mut self, snapshot: &Snapshot) -> Option<usize> {
        self.dependent = true;
        match snapshot
            .geo
            .lookup_index(self.bits, self.width, self.prefix)
        {
            Some((region, len)) => {
                self.scope = self.scope.max(len);
                Some(region as usize)
            }
            None => {
                self.missed = true;
                None
            }
        }
    }

    /// Scope prefix length for the ECS echo.
    fn scope(&self) -> u8 {
        match (self.dependent, self.missed) {
            (false, _) => 0,
            (true, true) => self.prefix,
            (true, false) => self.scope,
        }
    }
}

/// Writes `owner` pointer + record.
#[inline]
fn put(out: &mut Vec<u8>, owner: u16, record: &[u8]) {
    out.extend_from_slice(&owner.to_be_bytes());
    out.extend_from_slice(record);
}

/// Writes the records of `set` rotated by `turn`, leaving out `skip`'s (already answered first).
#[inline]
fn put_rotated(out: &mut Vec<u8>, owner: u16, set: &Rrset, turn: u32, skip: u16) -> u16 {
    let n = set.len();
    if n == 0 {
        return 0;
    }
    let k = turn as usize % n;
    let mut count = 0;
    for (cluster, record) in set.iter().skip(k).chain(set.iter().take(k)) {
        if cluster != skip {
            put(out, owner, record);
            count += 1;
        }
    }
    count
}

/// A/AAAA of one family at a service name.
fn put_addr_set(
    out: &mut Vec<u8>,
    owner: u16,
    set: &AddrSet,
    snapshot: &Snapshot,
    client: &mut Client,
    worker: &mut Worker,
) -> u16 {
    let mut count = 0;
    let mut skip = u16::MAX;
    if !set.local.is_empty() {
        if let Some(cluster) = client.local(snapshot) {
            if let Some((_, records)) = set.local.iter().find(|(c, _)| *c == cluster) {
                for (_, record) in records.iter() {
                    put(out, owner, record);
                    count += 1;
                }
                skip = cluster;
            }
        }
    }
    let chosen = match &set.pick {
        Pick::Rotate(records) => records,
        Pick::Weighted { total, groups } => {
            let x = worker.random() % total;
            groups
                .iter()
                .find(|(cum, _)| x < *cum)
                .map_or(&groups[0].1, |(_, r)| r)
        }
        Pick::Geo {
            by_region,
            sets,
            default,
        } => match client.region(snapshot) {
            Some(region) => match by_region.get(region) {
                Some(&i) if (i as usize) < sets.len() => &sets[i as usize],
                _ => default,
            },
            None => default,
        },
    };
    worker.counter = worker.counter.wrapping_add(1);
    count + put_rotated(out, owner, chosen, worker.counter, skip)
}

/// Answers `question` into `worker.out`.
pub(crate) fn compose(
    snapshot: &Snapshot,
    question: &Question<'_>,
    source: IpAddr,
    tcp: bool,
    worker: &mut Worker,
) -> Outcome {
    let mut out = std::mem::take(&mut worker.out);
    out.clear();
    out.extend_from_slice(&[0; 12]);
    out.extend_from_slice(&question.raw);
    let question_end = out.len();

    let ecs = question.edns.and_then(|e| e.ecs);
    let mut client = match ecs {
        Some(ecs) => Client {
            bits: ecs.bits,
            width: ecs.width,
            prefix: ecs.source,
            scope: 0,
            dependent: false,
            missed: false,
        },
        None => {
            let (bits, width) = ip_bits(source);
            Client {
                bits,
                width,
                prefix: width,
                scope: 0,
                dependent: false,
                missed: false,
            }
        }
    };

    let (mut an, mut ns, mut ar, mut aa) = (0u16, 0u16, 0u16, false);
    let mut code = rcode::NOERROR;
    let bad_version = question.edns.is_some_and(|e| e.version > 0);
    let zone_at = crate::wire::zone_offset(question.name(), &snapshot.zone);
    if bad_version {
        code = rcode::BADVERS;
    } else if question.qclass != CLASS_IN && question.qclass != CLASS_ANY {
        code = rcode::REFUSED;
    } else if matches!(question.qtype, 251 | 252) {
        // IXFR/AXFR: zone transfers are not offered
        code = rcode::REFUSED;
    } else if let Some(zone_at) = zone_at {
        aa = true;
        let apex = 0xc000 | (12 + zone_at) as u16;
        let mut node = snapshot.names.get(question.name());
        if node.is_none() {
            code = rcode::NXDOMAIN;
        }
        let mut owner = 0xc00cu16;
        let mut answered = false;
        let mut chain = 0;
        let mut glue_owner = None;
        while let Some(current) = node.take() {
            match current {
                Node::Empty => {}
                Node::Static(sets) => {
                    for (rtype, set) in sets.iter() {
                        if *rtype == question.qtype || question.qtype == TYPE_ANY {
                            for (_, record) in set.iter() {
                                put(&mut out, owner, record);
                                an += 1;
                                if *rtype == TYPE_NS && snapshot.glue.len() > 0 {
                                    // the NS target is the RDATA just written, uncompressed
                                    glue_owner = Some(out.len() - (record.len() - 10));
                                }
                            }
                            answered = true;
                        }
                    }
                }
                Node::Service(service) => {
                    let (v4, v6) = match question.qtype {
                        TYPE_A => (service.v4.as_ref(), None),
                        TYPE_AAAA => (None, service.v6.as_ref()),
                        TYPE_ANY => (service.v4.as_ref(), service.v6.as_ref()),
                        _ => (None, None),
                    };
                    for set in [v4, v6].into_iter().flatten() {
                        an += put_addr_set(&mut out, owner, set, snapshot, &mut client, worker);
                        answered = true;
                    }
                }
                Node::Cname { target, record } => {
                    put(&mut out, owner, record);
                    an += 1;
                    if question.qtype == TYPE_CNAME {
                        answered = true;
                    } else {
                        let at = out.len() - target.len();
                        chain += 1;
                        if at < 0x3fff && chain < MAX_CHAIN {
                            owner = 0xc000 | at as u16;
                            node = snapshot.names.get(&target[..]);
                        }
                        // the target is in the zone and present by construction; if a chain is cut
                        // the resolver follows the last CNAME itself
                        answered = node.is_none();
                    }
                }
            }
        }
        if !answered {
            put(&mut out, apex, &snapshot.soa_negative);
            ns = 1;
        }
        if let Some(at) = glue_owner.filter(|&at| at < 0x3fff) {
            for (_, record) in snapshot.glue.iter() {
                put(&mut out, 0xc000 | at as u16, record);
                ar += 1;
            }
        }
    } else {
        code = rcode::REFUSED;
    }

    // OPT: root owner, TYPE 41, CLASS our payload, TTL ext-rcode/version/DO, options
    let opt_len = match question.edns {
        None => 0,
        Some(_) => 11 + ecs.map_or(0, |e| 8 + (e.source as usize).div_ceil(8)),
    };
    let limit = if tcp {
        65535
    } else {
        match question.edns {
            None => 512,
            Some(e) => e.payload.clamp(512, EDNS_PAYLOAD) as usize,
        }
    };
    let truncated = out.len() + opt_len > limit;
    if truncated {
        out.truncate(question_end);
        an = 0;
        ns = 0;
        ar = 0;
    }
    if let Some(edns) = question.edns {
        out.push(0);
        out.extend_from_slice(&TYPE_OPT.to_be_bytes());
        out.extend_from_slice(&EDNS_PAYLOAD.to_be_bytes());
        out.push((code >> 4) as u8);
        out.push(0);
        out.push(if edns.dnssec_ok { 0x80 } else { 0 });
        out.push(0);
        match ecs {
            None => out.extend_from_slice(&0u16.to_be_bytes()),
            Some(ecs) => {
                let bytes = (ecs.source as usize).div_ceil(8);
                out.extend_from_slice(&((8 + bytes) as u16).to_be_bytes());
                out.extend_from_slice(&OPTION_ECS.to_be_bytes());
                out.extend_from_slice(&((4 + bytes) as u16).to_be_bytes());
                out.extend_from_slice(&ecs.family.to_be_bytes());
                out.push(ecs.source);
                out.push(client.scope());
                let addr = (ecs.bits << (128 - ecs.width as u32)).to_be_bytes();
                out.extend_from_slice(&addr[..bytes]);
            }
        }
    }
    let flags: u16 = 0x8000
        | if aa { 0x0400 } else { 0 }
        | if truncated { 0x0200 } else { 0 }
        | question.copied_flags
        | (code & 0x0f);
    out[0..2].copy_from_slice(&question.id.to_be_bytes());
    out[2..4].copy_from_slice(&flags.to_be_bytes());
    out[4..6].copy_from_slice(&1u16.to_be_bytes());
    out[6..8].copy_from_slice(&an.to_be_bytes());
    out[8..10].copy_from_slice(&ns.to_be_bytes());
    out[10..12].copy_from_slice(&(ar + u16::from(question.edns.is_some())).to_be_bytes());
    worker.out = out;
    Outcome {
        rcode: code,
        truncated,
    }
}

/// An error response without question: ID and opcode of the query, `code`.
pub(crate) fn error(packet: &[u8], code: u16, worker: &mut Worker) -> Outcome {
    let out = &mut worker.out;
    out.clear();
    out.extend_from_slice(&packet[0..2]);
    out.push(0x80 | (packet[2] & 0x78));
    out.push(code as u8 & 0x0f);
    out.extend_from_slice(&[0; 8]);
    Outcome {
        rcode: code,
        truncated: false,
    }
}
