//! The controllers' Prometheus metrics, served with the hub's at `/metrics`
//! ([`register`] adds them to the hub's registry).
//!
//! - `flotilla_controller_reconcile_total{controller,result}`: reconciles finished, by
//!   controller (`detector`, `scheduler`, `binding`, `dependencies`) and result (`ok`,
//!   `error`).
//! - `flotilla_failover_evictions_total`: clusters failover took an object out of.
//! - `flotilla_failbacks_total`: objects failback returned to the clusters they left.
//! - `flotilla_graceful_evictions_ended_total`: eviction tasks ended (replacement ready,
//!   timed out, or the cluster targeted again).
//! - `flotilla_dns_fail_open_services`: federated Services every endpoint of which the voters
//!   see down, so all are answered (fail open).
//! - `flotilla_dns_unhealthy_endpoints`: endpoints of federated Services a strict majority of
//!   the fresh voters sees down.
//! - `flotilla_controller_shards_owned{identity}`: shards this controller process owns
//!   ([`crate::shards`]).
//! - `flotilla_controller_shard_transitions_total{identity,event}`: shard Leases `acquired`,
//!   `released` (rebalance, shutdown) and `lost` (not renewed in time, or taken).

use std::sync::OnceLock;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReconcileLabels {
    controller: &'static str,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ReasonLabels {
    reason: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct IdentityLabels {
    identity: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct TransitionLabels {
    identity: String,
    event: &'static str,
}

/// The counters; one set per process ([`metrics`]).
#[derive(Default)]
pub struct Metrics {
    reconciles: Family<ReconcileLabels, Counter>,
    /// Clusters failover took an object out of.
    pub failover_evictions: Counter,
    /// Objects failback returned.
    pub failbacks: Counter,
    /// Eviction tasks ended.
    pub graceful_evictions_ended: Counter,
    /// Federated Services answered fail-open (every endpoint down).
    pub dns_fail_open_services: Gauge,
    /// Endpoints of federated Services judged Unhealthy.
    pub dns_unhealthy_endpoints: Gauge,
    shards_owned: Family<IdentityLabels, Gauge>,
    shard_transitions: Family<TransitionLabels, Counter>,
    rollout_events: Family<ReasonLabels, Counter>,
}

impl Metrics {
    /// Counts one finished reconcile of `controller`.
    pub fn reconciled(&self, controller: &'static str, ok: bool) {
        let result = if ok { "ok" } else { "error" };
        self.reconciles
            .get_or_create(&ReconcileLabels { controller, result })
            .inc();
    }

    /// Sets how many shards `identity` owns.
    pub fn shards_owned(&self, identity: &str, n: usize) {
        self.shards_owned
            .get_or_create(&IdentityLabels {
                identity: identity.to_owned(),
            })
            .set(n as i64);
    }

    /// Counts a progressive rollout's event by its reason (`RolloutStep`,
    /// `RolloutClusterFailed`, `RolloutComplete`, `RolloutFailed`).
    pub fn rollout_event(&self, reason: &'static str) {
        self.rollout_events
            .get_or_create(&ReasonLabels { reason })
            .inc();
    }

    /// Counts a shard Lease `event` (`acquired`, `released`, `lost`) of `identity`.
    pub fn shard_transition(&self, identity: &str, event: &'static str) {
        self.shard_transitions
            .get_or_create(&TransitionLabels {
                identity: identity.to_owned(),
                event,
            })
            .inc();
    }
}

/// This process's controller metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::default)
}

/// Adds the controllers' metrics to `registry` (the hub's, served at `/metrics`).
pub fn register(registry: &mut Registry) {
    let m = metrics();
    registry.register(
        "flotilla_controller_reconcile",
        "Reconciles finished, by controller and result",
        m.reconciles.clone(),
    );
    registry.register(
        "flotilla_failover_evictions",
        "Clusters failover took an object out of",
        m.failover_evictions.clone(),
    );
    registry.register(
        "flotilla_failbacks",
        "Objects failback returned to the clusters failover took them out of",
        m.failbacks.clone(),
    );
    registry.register(
        "flotilla_graceful_evictions_ended",
        "Graceful eviction tasks ended",
        m.graceful_evictions_ended.clone(),
    );
    registry.register(
        "flotilla_dns_fail_open_services",
        "Federated Services every endpoint of which is down, so all are answered (fail open)",
        m.dns_fail_open_services.clone(),
    );
    registry.register(
        "flotilla_dns_unhealthy_endpoints",
        "Endpoints of federated Services a strict majority of fresh voters sees down",
        m.dns_unhealthy_endpoints.clone(),
    );
    registry.register(
        "flotilla_controller_shards_owned",
        "Shards this controller process owns, by process identity",
        m.shards_owned.clone(),
    );
    registry.register(
        "flotilla_rollout_events",
        "Progressive rollout events by reason: steps taken, clusters failed, rollouts complete and stopped",
        m.rollout_events.clone(),
    );
    registry.register(
        "flotilla_controller_shard_transitions",
        "Shard Leases acquired, released and lost, by process identity",
        m.shard_transitions.clone(),
    );
}

/// The controllers' metrics in the Prometheus/OpenMetrics text format (for a controller
/// process's own `/metrics`; a hub serves them with its own).
pub fn exposition() -> String {
    let mut registry = Registry::default();
    register(&mut registry);
    let mut out = String::new();
    // Writing into a String cannot fail.
    let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
    out
}

/// A `for_each` step for a kube-runtime controller's output stream: counts each result.
pub fn count<T, E>(
    controller: &'static str,
) -> impl FnMut(Result<T, E>) -> futures::future::Ready<()> {
    move |r| {
        metrics().reconciled(controller, r.is_ok());
        futures::future::ready(())
    }
}
