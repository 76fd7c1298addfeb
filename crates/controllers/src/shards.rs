//! Shards: how any number of controller processes share the work with no single leader.
//!
//! Everything the controllers do belongs to one of [`SHARDS`] shards: a binding (and its
//! Works, and the template it was made for) to the shard of its key ([`binding_key`]), a
//! cluster's push worker and health to the shard of the cluster's name, a singleton
//! controller (joining, tokens, namespace defaults, DNS, MCS) to the shard of its name
//! ([`shard_of`]). A process works a shard only while it holds the shard's Lease
//! `flotilla-system/flotilla-shard-<i>` ([`leases`]): held by its identity, renewed every
//! [`RENEW_EVERY`] with resourceVersion preconditions, expiring [`LEASE_DURATION`] after the
//! last renewal. Each process also renews a membership Lease `flotilla-controller-<identity>`;
//! from the live ones it counts the processes and claims free or expired shards up to its fair
//! share (`ceil(SHARDS / processes)`), and gives back the shards over its share when more
//! processes appear, so the work rebalances. A process that cannot renew a lease stops working
//! its shard before the lease can expire and be taken by another.
//!
//! [`Shards`] is the controllers' read-only handle: whether a shard or key is owned now, and a
//! signal when that changes, so gained shards are reconciled at once ([`Shards::gained`]) and
//! singletons start or stop with their shard ([`Shards::while_owned`]).

mod keeper;
pub mod leases;
mod plan;
mod state;
mod writes;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use futures::Stream;
use kube::runtime::controller::Action;
use tokio::sync::watch;

pub use self::leases::{Leases, StartError};
pub use self::plan::lapsed;
use crate::propagation::workload::fnv64;

/// How many shards the work is divided into.
pub const SHARDS: u32 = 16;
/// Where the shard and membership Leases live.
pub const NAMESPACE: &str = flotilla_apis::names::SYSTEM_NAMESPACE;
/// Name prefix of the shard Leases: `flotilla-shard-<i>`.
pub const SHARD_LEASE_PREFIX: &str = "flotilla-shard-";
/// Name prefix of the membership Leases: `flotilla-controller-<identity>`.
pub const MEMBER_LEASE_PREFIX: &str = "flotilla-controller-";
/// Label on the shard and membership Leases (value `shard` or `member`): the lease keeper
/// lists only these, not the Lease every member cluster renews in the same namespace (a
/// thousand of them listed every 3 s were a tenth of an idle hub's CPU).
pub const LEASE_LABEL: &str = "controllers.flotilla.io/lease";
/// A Lease not renewed for this long is free for anyone (`leaseDurationSeconds`).
pub const LEASE_DURATION: Duration = Duration::from_secs(10);
/// How often a process renews its Leases.
pub const RENEW_EVERY: Duration = Duration::from_secs(3);

/// The shard of `key`: FNV-1a (64 bits) of it, modulo [`SHARDS`]. Keys: [`binding_key`] for
/// bindings, their Works and templates; a cluster's name for its push worker and health; a
/// singleton controller's name for the singleton.
pub fn shard_of(key: &str) -> u32 {
    (fnv64(key.as_bytes()) % u64::from(SHARDS)) as u32
}

/// The key of a binding: `<namespace>/<name>` (`/<name>` for a ClusterResourceBinding). Works
/// name their binding in annotations, and the detector derives its template's binding name,
/// so a template, its binding and its Works share one shard.
pub fn binding_key(namespace: Option<&str>, name: &str) -> String {
    format!("{}/{name}", namespace.unwrap_or(""))
}

/// The name of shard `shard`'s Lease.
pub fn lease_name(shard: u32) -> String {
    format!("{SHARD_LEASE_PREFIX}{shard}")
}

/// A set of shards.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Owned(u32);

impl Owned {
    /// No shard.
    pub const NONE: Owned = Owned(0);
    /// Every shard.
    pub const ALL: Owned = Owned((1 << SHARDS) - 1);

    /// Whether `shard` is in the set.
    pub fn contains(self, shard: u32) -> bool {
        shard < SHARDS && self.0 & (1 << shard) != 0
    }

    /// The set with `shard` added.
    #[must_use]
    pub fn with(self, shard: u32) -> Owned {
        Owned(self.0 | (1 << (shard % SHARDS)))
    }

    /// How many shards the set holds.
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether `self` holds a shard `before` did not.
    pub fn gains_over(self, before: Owned) -> bool {
        self.0 & !before.0 != 0
    }

    /// The shards, in ascending order.
    pub fn iter(self) -> impl Iterator<Item = u32> {
        (0..SHARDS).filter(move |s| self.contains(*s))
    }
}

impl FromIterator<u32> for Owned {
    fn from_iter<I: IntoIterator<Item = u32>>(iter: I) -> Self {
        iter.into_iter().fold(Owned::NONE, Owned::with)
    }
}

/// A process's view of the shards it owns (cheap to clone; see [`Leases::start`]).
#[derive(Clone, Debug)]
pub struct Shards {
    identity: Arc<str>,
    owned: watch::Receiver<Owned>,
    /// Whether work runs fenced by its shard's Lease ([`crate::fence`]); not for [`Shards::all`],
    /// which holds no Lease.
    fenced: bool,
}

impl Shards {
    /// A handle owning every shard, always, with no Lease: for tests of single controllers.
    pub fn all() -> Shards {
        let (_, owned) = watch::channel(Owned::ALL);
        Shards {
            identity: Arc::from("all-shards"),
            owned,
            fenced: false,
        }
    }

    pub(crate) fn new(identity: &str, owned: watch::Receiver<Owned>) -> Shards {
        Shards {
            identity: Arc::from(identity),
            owned,
            fenced: true,
        }
    }

    /// This process's identity (the Leases' `holderIdentity`).
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// The shards owned now.
    pub fn owned(&self) -> Owned {
        *self.owned.borrow()
    }

    /// Whether this process owns `shard` now.
    pub fn owns(&self, shard: u32) -> bool {
        self.owned().contains(shard)
    }

    /// Whether this process owns the shard of `key` now ([`shard_of`]).
    pub fn owns_key(&self, key: &str) -> bool {
        self.owns(shard_of(key))
    }

    /// The owned shards, as they change.
    pub fn changes(&self) -> watch::Receiver<Owned> {
        self.owned.clone()
    }

    /// Runs `work` if this process owns the shard of `key` (`None` when it does not: the
    /// early return every sharded reconciler starts with), its writes fenced by the shard's
    /// Lease ([`crate::fence::under`]).
    pub async fn work<F: Future>(&self, key: &str, work: F) -> Option<F::Output> {
        let shard = shard_of(key);
        if !self.owns(shard) {
            return None;
        }
        Some(self.fenced(shard, work).await)
    }

    /// A kube-runtime reconciler's answer for the object of `key`: `work`'s when this process
    /// owns its shard (fenced, as [`Shards::work`]), else to wait for a change (the owner of
    /// the shard works it).
    pub async fn reconcile<F, E>(&self, key: &str, work: F) -> Result<Action, E>
    where
        F: Future<Output = Result<Action, E>>,
    {
        self.work(key, work)
            .await
            .unwrap_or(Ok(Action::await_change()))
    }

    async fn fenced<F: Future>(&self, shard: u32, work: F) -> F::Output {
        if self.fenced {
            crate::fence::under(&lease_name(shard), &self.identity, work).await
        } else {
            work.await
        }
    }

    /// Ticks whenever this process gains a shard (not for the shards owned when called): a
    /// controller's `reconcile_all_on`, so the objects of a gained shard are looked at at once.
    pub fn gained(&self) -> impl Stream<Item = ()> + Send + 'static {
        let mut rx = self.owned.clone();
        let before = *rx.borrow_and_update();
        futures::stream::unfold((rx, before), |(mut rx, mut before)| async move {
            loop {
                rx.changed().await.ok()?;
                let now = *rx.borrow_and_update();
                let gained = now.gains_over(before);
                before = now;
                if gained {
                    return Some(((), (rx, before)));
                }
            }
        })
    }

    /// Ticks whenever the owned shards change (gained or lost; not for the shards owned when
    /// called): for workers started and stopped with ownership, such as push workers.
    pub fn changed(&self) -> impl Stream<Item = ()> + Send + 'static {
        let mut rx = self.owned.clone();
        rx.borrow_and_update();
        futures::stream::unfold(rx, |mut rx| async move {
            rx.changed().await.ok()?;
            rx.borrow_and_update();
            Some(((), rx))
        })
    }

    /// Runs the singleton `name` (started by `start`) while this process owns the shard of
    /// `name`: started when the shard is gained, dropped at once when it is lost, started again
    /// when it comes back. Returns when the singleton itself returns.
    pub async fn while_owned<F, Fut>(&self, name: &str, mut start: F)
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = ()>,
    {
        let shard = shard_of(name);
        let mut rx = self.owned.clone();
        loop {
            if rx.wait_for(|o| o.contains(shard)).await.is_err() {
                return;
            }
            tracing::info!(controller = name, shard, "this process runs the singleton");
            let mut lost = self.owned.clone();
            let lost = async move {
                // A handle whose sender is gone ([`Shards::all`]) never loses anything.
                if lost.wait_for(|o| !o.contains(shard)).await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                _ = self.fenced(shard, start()) => return,
                _ = lost => tracing::info!(controller = name, shard, "shard lost: the singleton stops here"),
            }
        }
    }
}

#[cfg(test)]
mod tests;
