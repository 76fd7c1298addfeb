//! Query counters: plain atomics, one cache-line-aligned block per worker so workers never share a
//! line; readers sum them.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::respond::{rcode, Outcome};

#[derive(Default)]
#[repr(align(128))]
struct Counters {
    udp: AtomicU64,
    tcp: AtomicU64,
    noerror: AtomicU64,
    nxdomain: AtomicU64,
    refused: AtomicU64,
    formerr: AtomicU64,
    notimp: AtomicU64,
    other: AtomicU64,
    truncated: AtomicU64,
    dropped: AtomicU64,
}

/// Counters of a running [`super::Server`].
pub struct Metrics {
    slots: Box<[Counters]>,
}

/// Totals read from [`Metrics`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MetricsSnapshot {
    /// Queries received over UDP.
    pub udp_queries: u64,
    /// Queries received over TCP.
    pub tcp_queries: u64,
    /// Answers with NOERROR (including NODATA).
    pub noerror: u64,
    /// Answers with NXDOMAIN.
    pub nxdomain: u64,
    /// Answers with REFUSED (outside the zone, transfers, other classes).
    pub refused: u64,
    /// Answers with FORMERR.
    pub formerr: u64,
    /// Answers with NOTIMP.
    pub notimp: u64,
    /// Answers with any other code (BADVERS).
    pub other: u64,
    /// UDP answers sent truncated (TC=1).
    pub truncated: u64,
    /// Packets not answered (responses, runts).
    pub dropped: u64,
}

impl Metrics {
    pub(crate) fn new(slots: usize) -> Metrics {
        Metrics {
            slots: (0..slots).map(|_| Counters::default()).collect(),
        }
    }

    pub(crate) fn worker_slots(&self) -> usize {
        self.slots.len()
    }

    #[inline]
    pub(crate) fn record(&self, slot: usize, tcp: bool, outcome: Option<Outcome>) {
        let c = &self.slots[slot];
        if tcp { &c.tcp } else { &c.udp }.fetch_add(1, Relaxed);
        let Some(outcome) = outcome else {
            c.dropped.fetch_add(1, Relaxed);
            return;
        };
        let counter = match outcome.rcode {
            rcode::NOERROR => &c.noerror,
            rcode::NXDOMAIN => &c.nxdomain,
            rcode::REFUSED => &c.refused,
            rcode::FORMERR => &c.formerr,
            rcode::NOTIMP => &c.notimp,
            _ => &c.other,
        };
        counter.fetch_add(1, Relaxed);
        if outcome.truncated {
            c.truncated.fetch_add(1, Relaxed);
        }
    }

    /// Sums every worker's counters.
    pub fn snapshot(&self) -> MetricsSnapshot {
        let mut s = MetricsSnapshot::default();
        for c in self.slots.iter() {
            s.udp_queries += c.udp.load(Relaxed);
            s.tcp_queries += c.tcp.load(Relaxed);
            s.noerror += c.noerror.load(Relaxed);
            s.nxdomain += c.nxdomain.load(Relaxed);
            s.refused += c.refused.load(Relaxed);
            s.formerr += c.formerr.load(Relaxed);
            s.notimp += c.notimp.load(Relaxed);
            s.other += c.other.load(Relaxed);
            s.truncated += c.truncated.load(Relaxed);
            s.dropped += c.dropped.load(Relaxed);
        }
        s
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.snapshot().fmt(f)
    }
}
