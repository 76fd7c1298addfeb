//! Closed-loop throughput: N clients each send their next request as soon as the last one is
//! answered, until the work is done or the phase's time budget is spent.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use hyper::Method;
use indicatif::ProgressBar;
use serde::Deserialize;

use super::super::client::Client;
use super::configmap;

/// A phase stops early after this many failed requests: the server is not coping, and the
/// figure would measure error handling.
const MAX_ERRORS: usize = 100;

/// How a closed-loop phase went.
#[derive(Debug)]
pub struct Tally {
    /// Requests that succeeded.
    pub done: usize,
    /// Requests asked for.
    pub wanted: usize,
    /// Requests that failed.
    pub errors: usize,
    /// The first failure.
    pub first_error: Option<String>,
    /// From the first request to the last answer.
    pub elapsed: Duration,
}

impl Tally {
    /// Successful requests per second.
    pub fn rate(&self) -> f64 {
        self.done as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// What qualifies the rate: errors, or work left undone when the budget ran out.
    pub fn detail(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.done < self.wanted {
            parts.push(format!("{} of {} done", self.done, self.wanted));
        }
        if let Some(e) = &self.first_error {
            parts.push(format!("{} errors, first: {e}", self.errors));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }

    /// An error when nothing succeeded.
    pub fn require_some(&self) -> Result<()> {
        if self.done == 0 {
            anyhow::bail!(
                "no request succeeded: {}",
                self.first_error
                    .as_deref()
                    .unwrap_or("the time budget ran out")
            );
        }
        Ok(())
    }
}

/// A ConfigMap as created: its name and resourceVersion (for updates).
#[derive(Clone, Debug)]
pub struct Stored {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.resourceVersion` after the write.
    pub rv: String,
}

#[derive(Deserialize)]
struct Object {
    metadata: Metadata,
}

#[derive(Deserialize)]
struct Metadata {
    #[serde(rename = "resourceVersion")]
    resource_version: String,
}

/// The resourceVersion of a returned object.
fn resource_version(body: &[u8]) -> Result<String> {
    let o: Object =
        serde_json::from_slice(body).context("the server returned an object without metadata")?;
    Ok(o.metadata.resource_version)
}

/// Create `n` ConfigMaps named `PREFIX-i` in `ns` with `clients` concurrent clients.
pub async fn create(
    client: &Client,
    ns: &str,
    prefix: &str,
    n: usize,
    clients: usize,
    budget: Duration,
    bar: &ProgressBar,
) -> (Tally, Vec<Stored>) {
    let (client, ns, prefix) = (
        client.clone(),
        Arc::<str>::from(ns),
        Arc::<str>::from(prefix),
    );
    let path: Arc<str> = Arc::from(format!("/api/v1/namespaces/{ns}/configmaps"));
    drive(n, clients, budget, bar, move |i| {
        let (client, ns, prefix, path) = (client.clone(), ns.clone(), prefix.clone(), path.clone());
        async move {
            let name = format!("{prefix}-{i}");
            let body = configmap(&ns, &name, None, None, b'a')?;
            let reply = client.send(Method::POST, &path, body).await?;
            let rv = resource_version(&reply.ok("create")?)?;
            Ok(Stored { name, rv })
        }
    })
    .await
}

/// Replace each of `objects` once (new data, its current resourceVersion) with `clients`
/// concurrent clients; returns the objects with their new resourceVersions.
pub async fn update(
    client: &Client,
    ns: &str,
    objects: Vec<Stored>,
    clients: usize,
    budget: Duration,
    bar: &ProgressBar,
) -> (Tally, Vec<Stored>) {
    let objects = Arc::new(objects);
    let (client, ns) = (client.clone(), Arc::<str>::from(ns));
    let n = objects.len();
    drive(n, clients, budget, bar, move |i| {
        let (client, ns, objects) = (client.clone(), ns.clone(), objects.clone());
        async move {
            let Stored { name, rv } = &objects[i];
            let body = configmap(&ns, name, Some(rv), None, b'b')?;
            let path = format!("/api/v1/namespaces/{ns}/configmaps/{name}");
            let reply = client.send(Method::PUT, &path, body).await?;
            let rv = resource_version(&reply.ok("update")?)?;
            Ok(Stored {
                name: name.clone(),
                rv,
            })
        }
    })
    .await
}

/// Run `op(0..n)` on `clients` workers until done, `MAX_ERRORS` failures, or `budget`.
pub async fn drive<T, F, Fut>(
    n: usize,
    clients: usize,
    budget: Duration,
    bar: &ProgressBar,
    op: F,
) -> (Tally, Vec<T>)
where
    T: Send + 'static,
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = Result<T>> + Send,
{
    let next = Arc::new(AtomicUsize::new(0));
    let errors = Arc::new(AtomicUsize::new(0));
    let first_error = Arc::new(Mutex::new(None::<String>));
    let started = tokio::time::Instant::now();
    let deadline = started + budget;
    let mut workers = Vec::with_capacity(clients);
    for _ in 0..clients.max(1) {
        let (next, errors, first_error) = (next.clone(), errors.clone(), first_error.clone());
        let (op, bar) = (op.clone(), bar.clone());
        workers.push(tokio::spawn(async move {
            let mut out = Vec::new();
            loop {
                if errors.load(Ordering::Relaxed) >= MAX_ERRORS {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                match tokio::time::timeout_at(deadline, op(i)).await {
                    Ok(Ok(t)) => {
                        out.push(t);
                        bar.inc(1);
                    }
                    Ok(Err(e)) => {
                        errors.fetch_add(1, Ordering::Relaxed);
                        if let Ok(mut first) = first_error.lock() {
                            first.get_or_insert_with(|| format!("{e:#}"));
                        }
                    }
                    Err(_) => break,
                }
            }
            out
        }));
    }
    let mut all = Vec::with_capacity(n);
    for w in workers {
        match w.await {
            Ok(out) => all.extend(out),
            Err(e) => {
                errors.fetch_add(1, Ordering::Relaxed);
                if let Ok(mut first) = first_error.lock() {
                    first.get_or_insert_with(|| format!("worker failed: {e}"));
                }
            }
        }
    }
    let elapsed = started.elapsed();
    let first_error = first_error.lock().ok().and_then(|mut f| f.take());
    let tally = Tally {
        done: all.len(),
        wanted: n,
        errors: errors.load(Ordering::Relaxed),
        first_error,
        elapsed,
    };
    (tally, all)
}

#[cfg(test)]
mod tests;
