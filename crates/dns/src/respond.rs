//! Answering one query from a snapshot, into a reusable buffer.
//!
//! Plain queries (one question, an optional OPT without Client Subnet) are parsed by hand
//! (`parse_fast`); anything else goes through hickory-proto (`parse_general`), which also decides
//! FORMERR and NOTIMP. Both give a [`Question`]; [`compose`] writes the answer from pre-encoded
//! records, patching only owner pointers, the ID and counts, and copies the question as sent so its
//! case survives.

mod compose;
mod parse;

pub(crate) use compose::compose;
pub(crate) use parse::{parse_fast, parse_general, Parsed};

use crate::snapshot::Snapshot;
use crate::zones::Zones;
use std::net::IpAddr;

/// Response codes (with the EDNS extended BADVERS).
pub(crate) mod rcode {
    pub(crate) const NOERROR: u16 = 0;
    pub(crate) const FORMERR: u16 = 1;
    pub(crate) const NXDOMAIN: u16 = 3;
    pub(crate) const NOTIMP: u16 = 4;
    pub(crate) const REFUSED: u16 = 5;
    pub(crate) const BADVERS: u16 = 16;
}

/// Per-thread state of a responder: the output buffer, the rotation counter and a PRNG.
pub(crate) struct Worker {
    pub(crate) out: Vec<u8>,
    counter: u32,
    rng: u64,
}

impl Worker {
    pub(crate) fn new() -> Worker {
        Worker {
            out: Vec::with_capacity(4096),
            counter: rand::random(),
            rng: rand::random::<u64>() | 1,
        }
    }

    /// A worker with a fixed PRNG seed, so statistical tests do not flake.
    #[cfg(test)]
    pub(crate) fn seeded(seed: u64) -> Worker {
        Worker {
            out: Vec::with_capacity(4096),
            counter: 0,
            rng: seed | 1,
        }
    }

    /// xorshift64*: weighted picks need speed and a fair spread, not secrecy.
    #[inline]
    pub(crate) fn random(&mut self) -> u32 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 32) as u32
    }
}

/// The EDNS Client Subnet of a query.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ecs {
    pub(crate) family: u16,
    pub(crate) source: u8,
    /// Address bits in the low `width` bits.
    pub(crate) bits: u128,
    pub(crate) width: u8,
}

/// Outcome of [`respond`]: the response is in `worker.out` unless dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) rcode: u16,
    pub(crate) truncated: bool,
}

/// Where answers come from: one snapshot, or the snapshot of the zone a question falls in.
pub(crate) trait Answers {
    /// Answers a parsed question into `worker.out`.
    fn answer(
        &self,
        question: &parse::Question<'_>,
        source: IpAddr,
        tcp: bool,
        worker: &mut Worker,
    ) -> Outcome;
}

impl Answers for Snapshot {
    #[inline]
    fn answer(
        &self,
        question: &parse::Question<'_>,
        source: IpAddr,
        tcp: bool,
        worker: &mut Worker,
    ) -> Outcome {
        compose(self, question, source, tcp, worker)
    }
}

impl Answers for Zones {
    #[inline]
    fn answer(
        &self,
        question: &parse::Question<'_>,
        source: IpAddr,
        tcp: bool,
        worker: &mut Worker,
    ) -> Outcome {
        let snapshot = self.guard(question.name());
        compose(&snapshot, question, source, tcp, worker)
    }
}

/// Answers `packet` from `answers` into `worker.out`; `None` means send nothing (a response, or
/// too short to carry an ID).
pub(crate) fn respond<A: Answers + ?Sized>(
    answers: &A,
    packet: &[u8],
    source: IpAddr,
    tcp: bool,
    worker: &mut Worker,
) -> Option<Outcome> {
    match parse_fast(packet) {
        Some(Parsed::Query(question)) => Some(answers.answer(&question, source, tcp, worker)),
        Some(Parsed::Drop) => None,
        Some(Parsed::Error { rcode }) => Some(compose::error(packet, rcode, worker)),
        None => match parse_general(packet) {
            Parsed::Query(question) => Some(answers.answer(&question, source, tcp, worker)),
            Parsed::Drop => None,
            Parsed::Error { rcode } => Some(compose::error(packet, rcode, worker)),
        },
    }
}

#[cfg(test)]
mod tests;
