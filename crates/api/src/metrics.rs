//! Prometheus metrics at `/metrics`.
//!
//! - `apiserver_request_total{verb,code}`: requests served, by HTTP method and status code.
//! - `apiserver_request_duration_seconds{verb}`: request latency histogram.
//! - `flotilla_watch_cache_revision`: the revision the watch cache has applied.
//! - `flotilla_http_connections`: connections open (at most `serve --max-connections`).
//!
//! Requests are counted before they are authenticated, so every label comes from a fixed set:
//! a method outside HTTP's own is `other` (one series per made-up method would let anyone grow
//! the hub's memory), and the code is one the hub itself answered.

use std::sync::atomic::Ordering;
use std::time::Duration;

use parking_lot::Mutex;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    verb: String,
    code: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerbLabels {
    verb: String,
}

/// The server's metrics.
pub struct Metrics {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: Family<VerbLabels, Histogram>,
    /// Revision applied by the watch cache.
    pub cache_revision: Gauge,
    /// Connections open.
    pub connections: Gauge,
    store: StoreMetrics,
}

/// The store's figures, read at each scrape ([`Metrics::sample_store`]).
#[derive(Default)]
struct StoreMetrics {
    commits: Counter,
    committed_writes: Counter,
    handed_on: Counter,
    writer_of_record: Gauge,
    runs_loops: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::default();
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<VerbLabels, Histogram>::new_with_constructor(|| {
            Histogram::new(exponential_buckets(0.0005, 2.0, 16))
        });
        let cache_revision = Gauge::default();
        let connections = Gauge::default();
        registry.register(
            "apiserver_request",
            "API requests served, by method and code",
            requests.clone(),
        );
        registry.register(
            "apiserver_request_duration_seconds",
            "API request latency",
            latency.clone(),
        );
        registry.register(
            "flotilla_watch_cache_revision",
            "Revision applied by the watch cache",
            cache_revision.clone(),
        );
        registry.register(
            "flotilla_http_connections",
            "HTTPS connections open",
            connections.clone(),
        );
        let store = StoreMetrics::default();
        registry.register(
            "flotilla_store_commits",
            "Transactions this replica's store writer committed (group commits)",
            store.commits.clone(),
        );
        registry.register(
            "flotilla_store_committed_writes",
            "Writes in the transactions this replica's store writer committed",
            store.committed_writes.clone(),
        );
        registry.register(
            "flotilla_store_writes_handed_on",
            "This replica's writes committed by the writer of record (HA mode)",
            store.handed_on.clone(),
        );
        registry.register(
            "flotilla_store_writer_of_record",
            "1 if this replica commits the writes of every replica (HA mode)",
            store.writer_of_record.clone(),
        );
        registry.register(
            "flotilla_store_runs_loops",
            "1 if this process runs the server's own loops: garbage collection, namespace \
             deletion, quota and budget status (in HA mode one replica at a time does)",
            store.runs_loops.clone(),
        );
        Metrics {
            store,
            registry: Mutex::new(registry),
            requests,
            latency,
            cache_revision,
            connections,
        }
    }
}

impl Metrics {
    /// Count one request.
    pub fn observe(&self, method: &str, code: u16, took: Duration) {
        let verb = verb_label(method);
        self.requests
            .get_or_create(&RequestLabels {
                verb: verb.to_owned(),
                code: code.to_string(),
            })
            .inc();
        self.latency
            .get_or_create(&VerbLabels {
                verb: verb.to_owned(),
            })
            .observe(took.as_secs_f64());
    }

    /// Read the store's figures into the metrics (before a scrape).
    pub fn sample_store(&self, store: &flotilla_store::Store) {
        let commits = store.commit_stats();
        self.store
            .commits
            .inner()
            .store(commits.commits, Ordering::Relaxed);
        self.store
            .committed_writes
            .inner()
            .store(commits.writes, Ordering::Relaxed);
        self.store
            .runs_loops
            .set(i64::from(*store.runs_loops().borrow()));
        if let Some(replica) = store.replica_stats() {
            self.store
                .handed_on
                .inner()
                .store(replica.handed_on, Ordering::Relaxed);
            self.store
                .writer_of_record
                .set(i64::from(replica.writer_of_record));
        }
    }

    /// Lets another part of the process (the controllers) add its metrics to `/metrics`.
    pub fn register_with(&self, add: impl FnOnce(&mut Registry)) {
        add(&mut self.registry.lock());
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry.lock());
        out
    }
}

/// The `verb` label of a method: HTTP's own methods by name, anything else `other`.
fn verb_label(method: &str) -> &'static str {
    const KNOWN: [&str; 9] = [
        "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE",
    ];
    KNOWN
        .into_iter()
        .find(|known| *known == method)
        .unwrap_or("other")
}

#[cfg(test)]
mod tests;
