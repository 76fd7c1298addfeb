//! The writes of the HA benchmark: ConfigMap creates through a chosen replica, each returning
//! when it was acknowledged and at which resourceVersion; a closed-loop run of N clients for a
//! fixed time (creates/s); and the namespaces they go to.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytes::Bytes;
use hyper::Method;
use indicatif::ProgressBar;
use serde_json::{json, Value};

use super::super::client::Client;
use super::super::stats::{self, Summary};

/// Bytes of data in each ConfigMap (as `bench api`'s).
const DATA_BYTES: usize = 1024;

/// How long one create may take before it counts as failed.
pub const CREATE_TIMEOUT: Duration = Duration::from_secs(10);

/// An acknowledged create.
#[derive(Clone, Debug)]
pub struct Created {
    /// `metadata.name`.
    pub name: String,
    /// The resourceVersion the server answered with.
    pub rv: u64,
    /// When the answer arrived.
    pub acked: Instant,
}

/// Create the namespace `ns` through `client`.
pub async fn namespace(client: &Client, ns: &str) -> Result<()> {
    let body = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}});
    client
        .post(
            "/api/v1/namespaces",
            Bytes::from(serde_json::to_vec(&body)?),
        )
        .await
        .with_context(|| format!("cannot create the namespace {ns}"))?;
    Ok(())
}

/// Create the ConfigMap `ns/name` through `client`.
pub async fn create(client: &Client, ns: &str, name: &str) -> Result<Created> {
    let body = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": ns},
        "data": {"payload": "h".repeat(DATA_BYTES)},
    });
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    let sent = client.send(Method::POST, &path, Bytes::from(serde_json::to_vec(&body)?));
    let reply = tokio::time::timeout(CREATE_TIMEOUT, sent)
        .await
        .map_err(|_| anyhow::anyhow!("no answer within {} s", CREATE_TIMEOUT.as_secs()))??;
    let acked = Instant::now();
    let body = reply.ok(&format!("creating {name}"))?;
    let rv = resource_version(&body)?;
    Ok(Created {
        name: name.to_string(),
        rv,
        acked,
    })
}

/// `metadata.resourceVersion` of an object, as a number (flotilla's are the store revision).
pub fn resource_version(body: &[u8]) -> Result<u64> {
    let v: Value = serde_json::from_slice(body).context("the answer is not JSON")?;
    rv_of(&v["metadata"]).context("the answer has no numeric metadata.resourceVersion")
}

/// The numeric `resourceVersion` of a `metadata` object.
pub fn rv_of(metadata: &Value) -> Option<u64> {
    metadata["resourceVersion"].as_str()?.parse().ok()
}

/// How a closed-loop run went.
#[derive(Clone, Debug)]
pub struct Throughput {
    /// Acknowledged creates.
    pub done: usize,
    /// Failed creates.
    pub errors: usize,
    /// The first failure.
    pub first_error: Option<String>,
    /// From the start to the last answer.
    pub elapsed: Duration,
    /// From sending each acknowledged create to its answer.
    pub latency: Option<Summary>,
}

impl Throughput {
    /// Acknowledged creates per second.
    pub fn rate(&self) -> f64 {
        self.done as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// `clients` clients, client `c` writing through `replicas[c % len]`, each creating its next
/// ConfigMap in `ns` as soon as the last one is answered, for `duration`.
pub async fn closed_loop(
    replicas: &[Client],
    ns: &str,
    prefix: &str,
    clients: usize,
    duration: Duration,
    bar: &ProgressBar,
) -> Throughput {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let deadline = started + duration;
    let mut workers = tokio::task::JoinSet::new();
    for c in 0..clients {
        let r = c % replicas.len();
        let client = replicas[r].clone();
        let (next, bar) = (next.clone(), bar.clone());
        let (ns, prefix) = (ns.to_string(), prefix.to_string());
        workers.spawn(async move {
            let (mut done, mut errors, mut first) = (Vec::new(), 0usize, None);
            while Instant::now() < deadline {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let sent = Instant::now();
                match create(&client, &ns, &format!("{prefix}-{i}")).await {
                    Ok(c) => {
                        done.push(c.acked - sent);
                        bar.inc(1);
                    }
                    Err(e) => {
                        errors += 1;
                        first.get_or_insert_with(|| format!("{e:#}"));
                        // A failing server answers fast; do not spin on it.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
            (done, errors, first)
        });
    }
    let mut t = Throughput {
        done: 0,
        errors: 0,
        first_error: None,
        elapsed: Duration::ZERO,
        latency: None,
    };
    let mut latencies = Vec::new();
    while let Some(joined) = workers.join_next().await {
        match joined {
            Ok((done, errors, first)) => {
                t.done += done.len();
                latencies.extend(done);
                t.errors += errors;
                if t.first_error.is_none() {
                    t.first_error = first;
                }
            }
            Err(e) => {
                t.errors += 1;
                t.first_error
                    .get_or_insert(format!("a client task failed: {e}"));
            }
        }
    }
    t.elapsed = started.elapsed();
    t.latency = stats::summarize(latencies);
    t
}
