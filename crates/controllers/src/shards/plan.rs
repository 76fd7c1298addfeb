//! The decisions of one lease round, from what the Leases say (pure: no I/O, no clock).

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;

use super::{MEMBER_LEASE_PREFIX, SHARDS, SHARD_LEASE_PREFIX};
use crate::propagation::workload::fnv64;

/// A shard's Lease as seen by one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// No Lease yet: created by whoever claims it first.
    Absent,
    /// Held by this process (renewed, or re-taken if it had lapsed).
    Mine,
    /// Nobody's: released, or not renewed within its duration.
    Free,
    /// Held by another live process.
    Taken,
}

/// What one round does.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Decision {
    /// Shards this process holds and keeps: renewed.
    pub renew: Vec<u32>,
    /// Shards this process holds beyond its share: given back.
    pub release: Vec<u32>,
    /// Shards to take (absent, free or expired), up to the share.
    pub claim: Vec<u32>,
}

/// A process's fair share when `live` processes (itself included) share the shards.
pub fn share(live: usize) -> usize {
    (SHARDS as usize).div_ceil(live.max(1))
}

/// Whether `lease` lapsed by `now`: no holder, or not renewed within its duration (free for
/// any process to claim).
pub fn lapsed(lease: &Lease, now: Timestamp) -> bool {
    let Some(spec) = lease.spec.as_ref() else {
        return true;
    };
    if spec
        .holder_identity
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        return true;
    }
    let Some(renewed) = spec.renew_time.as_ref() else {
        return true;
    };
    let duration = i64::from(spec.lease_duration_seconds.unwrap_or(0).max(0));
    now.as_second() > renewed.0.as_second() + duration
}

/// The Lease's holder identity (empty when it has none).
pub(super) fn holder(lease: &Lease) -> &str {
    lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .unwrap_or_default()
}

/// The shard a Lease name stands for, if it is a shard Lease.
pub fn shard_of_lease(name: &str) -> Option<u32> {
    let n: u32 = name.strip_prefix(SHARD_LEASE_PREFIX)?.parse().ok()?;
    (n < SHARDS).then_some(n)
}

/// Each shard's slot, from the Leases of the namespace.
pub fn slots(leases: &[Lease], identity: &str, now: Timestamp) -> [Slot; SHARDS as usize] {
    let mut slots = [Slot::Absent; SHARDS as usize];
    for l in leases {
        let Some(shard) = l.metadata.name.as_deref().and_then(shard_of_lease) else {
            continue;
        };
        slots[shard as usize] = if holder(l) == identity {
            Slot::Mine
        } else if lapsed(l, now) {
            Slot::Free
        } else {
            Slot::Taken
        };
    }
    slots
}

/// How many controller processes are live: the membership Leases renewed within their
/// duration, other than `own` (this process's), plus this one.
pub fn live_members(leases: &[Lease], own: &str, now: Timestamp) -> usize {
    let others = leases
        .iter()
        .filter(|l| {
            l.metadata
                .name
                .as_deref()
                .is_some_and(|n| n.starts_with(MEMBER_LEASE_PREFIX) && n != own && !lapsed(l, now))
        })
        .count();
    others + 1
}

/// Membership Leases of processes gone for a minute past their Lease's expiry: deleted, so
/// processes that come and go (default identities are new each start) leave no trail.
pub fn departed(leases: &[Lease], now: Timestamp) -> Vec<&Lease> {
    let long_ago = now - k8s_openapi::jiff::SignedDuration::from_secs(60);
    leases
        .iter()
        .filter(|l| {
            let member = l.metadata.name.as_deref();
            member.is_some_and(|n| n.starts_with(MEMBER_LEASE_PREFIX)) && lapsed(l, long_ago)
        })
        .collect()
}

/// Renew what is held up to the share, give back the rest (the highest shards first), and
/// claim free shards up to the share, starting from a place that depends on `identity`, so
/// processes starting together do not all race for the same shards.
pub fn decide(slots: &[Slot; SHARDS as usize], live: usize, identity: &str) -> Decision {
    let share = share(live);
    let mine: Vec<u32> = (0..SHARDS)
        .filter(|s| slots[*s as usize] == Slot::Mine)
        .collect();
    let keep = mine.len().min(share);
    let mut decision = Decision {
        renew: mine[..keep].to_vec(),
        release: mine[keep..].to_vec(),
        claim: Vec::new(),
    };
    let start = (fnv64(identity.as_bytes()) % u64::from(SHARDS)) as u32;
    decision.claim = (0..SHARDS)
        .map(|i| (start + i) % SHARDS)
        .filter(|s| matches!(slots[*s as usize], Slot::Absent | Slot::Free))
        .take(share - keep)
        .collect();
    decision
}

#[cfg(test)]
/// The set of shards a decision keeps or takes (what the process owns if every write
/// succeeds).
pub fn intended(d: &Decision) -> super::Owned {
    d.renew.iter().chain(&d.claim).copied().collect()
}
