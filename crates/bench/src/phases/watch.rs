//! Watch delivery latency: many watchers of one namespace while ConfigMaps are created there at
//! a steady rate. Each ConfigMap carries the wall-clock time it was sent in an annotation; each
//! watcher records arrival − send for every event, so a latency covers the write, the commit,
//! the fan-out and the bytes on the wire.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use futures::StreamExt;
use http_body_util::BodyExt;
use indicatif::ProgressBar;
use serde_json::Value;

use super::super::client::Client;
use super::super::figures::thousands;
use super::super::stats::{self, Summary};
use super::configmap;

/// The annotation that carries the send time (nanoseconds since the Unix epoch).
pub const SENT: &str = "bench.flotilla.dev/sent-unix-nanos";

/// Watch streams per HTTP/2 connection: below Go's default cap of 250 concurrent streams, so
/// the same split works against kube-apiserver.
const STREAMS_PER_CONNECTION: usize = 100;

/// How long watchers wait for the last events after the last create.
const GRACE: Duration = Duration::from_secs(10);

/// How the watch phase is shaped.
pub struct Shape {
    /// Concurrent watchers.
    pub watchers: usize,
    /// Creates per second.
    pub rate: u64,
    /// Creates in all.
    pub events: usize,
}

/// The outcome of the watch phase.
#[derive(Debug)]
pub struct Delivery {
    /// Delivery latencies over all watchers and events.
    pub summary: Summary,
    /// Events delivered (with a send time).
    pub delivered: usize,
    /// Events that should have been delivered: watchers × successful creates.
    pub expected: usize,
    /// Successful creates.
    pub created: usize,
    /// Creates that failed.
    pub create_errors: usize,
    /// The first failure of a create or a watch.
    pub first_error: Option<String>,
    /// HTTP/2 connections the watchers were spread over.
    pub connections: usize,
}

impl Delivery {
    /// What qualifies the percentiles.
    pub fn detail(&self) -> Option<String> {
        let mut parts = vec![format!(
            "{} of {} delivered",
            thousands(self.delivered as u64),
            thousands(self.expected as u64)
        )];
        if self.create_errors > 0 {
            parts.push(format!("{} creates failed", self.create_errors));
        }
        if let Some(e) = &self.first_error {
            parts.push(format!("first error: {e}"));
        }
        Some(parts.join("; "))
    }
}

fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Measure delivery to `shape.watchers` watchers of `ns` (an empty namespace).
pub async fn run(client: &Client, ns: &str, shape: &Shape, bar: &ProgressBar) -> Result<Delivery> {
    let list = client
        .get(&format!("/api/v1/namespaces/{ns}/configmaps?limit=1"))
        .await?;
    let list: Value = serde_json::from_slice(&list).context("decoding the ConfigMap list")?;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .context("the list has no resourceVersion to watch from")?
        .to_string();
    let connections = shape.watchers.div_ceil(STREAMS_PER_CONNECTION).max(1);
    let pool = client.with_connections(connections);
    let path = format!(
        "/api/v1/namespaces/{ns}/configmaps?watch=true&resourceVersion={rv}&allowWatchBookmarks=true"
    );
    bar.set_message("opening watches");
    let opening = futures::stream::iter(0..shape.watchers)
        .map(|_| pool.stream(&path))
        .buffer_unordered(200)
        .collect::<Vec<_>>();
    let streams = tokio::time::timeout(Duration::from_secs(60), opening)
        .await
        .context("the watches did not all open within 60 s")?
        .into_iter()
        .collect::<Result<Vec<_>>>()
        .context("opening a watch")?;
    // Every create is sent by `sending` after the pause; watchers give up `GRACE` after that.
    let settle = Duration::from_millis(500);
    let sending = stats::due(shape.events as u64, shape.rate);
    let deadline = tokio::time::Instant::now() + settle + sending + GRACE;
    let watchers: Vec<_> = streams
        .into_iter()
        .map(|body| tokio::spawn(watch_one(body, shape.events, deadline)))
        .collect();
    tokio::time::sleep(settle).await;

    bar.set_message("creating");
    let writer = client.with_connections(1);
    let (created, create_errors, mut first_error) = create_steadily(&writer, ns, shape, bar).await;
    bar.set_message("waiting for the last events");
    let mut latencies = Vec::with_capacity(shape.watchers * shape.events);
    for w in watchers {
        let (lat, err) = w.await.context("a watcher task failed")?;
        latencies.extend(lat);
        if let Some(e) = err {
            first_error.get_or_insert(e);
        }
    }
    let delivered = latencies.len();
    let summary = stats::summarize(latencies).with_context(|| {
        format!(
            "no event reached a watcher: {}",
            first_error.as_deref().unwrap_or("none arrived in time")
        )
    })?;
    Ok(Delivery {
        summary,
        delivered,
        expected: created * shape.watchers,
        created,
        create_errors,
        first_error,
        connections,
    })
}

/// Create `shape.events` ConfigMaps at `shape.rate` per second, each stamped with its send
/// time; returns how many were created, how many failed, and the first failure.
async fn create_steadily(
    writer: &Client,
    ns: &str,
    shape: &Shape,
    bar: &ProgressBar,
) -> (usize, usize, Option<String>) {
    let start = tokio::time::Instant::now();
    let path: Arc<str> = Arc::from(format!("/api/v1/namespaces/{ns}/configmaps"));
    let mut sends = Vec::with_capacity(shape.events);
    for i in 0..shape.events {
        tokio::time::sleep_until(start + stats::due(i as u64, shape.rate)).await;
        let (writer, path, ns) = (writer.clone(), path.clone(), ns.to_string());
        let bar = bar.clone();
        // Each create is its own task, so a slow one does not delay the next send.
        sends.push(tokio::spawn(async move {
            let sent = now_nanos().to_string();
            let body = configmap(&ns, &format!("w-{i}"), None, Some((SENT, &sent)), b'w')?;
            let r = tokio::time::timeout(GRACE, writer.post(&path, body)).await;
            bar.inc(1);
            r.context("create timed out")?.map(|_| ())
        }));
    }
    let (mut ok, mut errors, mut first) = (0, 0, None);
    for s in sends {
        match s.await {
            Ok(Ok(())) => ok += 1,
            Ok(Err(e)) => {
                errors += 1;
                first.get_or_insert(format!("{e:#}"));
            }
            Err(e) => {
                errors += 1;
                first.get_or_insert(format!("create task failed: {e}"));
            }
        }
    }
    (ok, errors, first)
}

/// Read one watch until it has seen `events` stamped events or `deadline`; returns the
/// latencies and an ERROR event's text, if one came.
async fn watch_one(
    body: hyper::body::Incoming,
    events: usize,
    deadline: tokio::time::Instant,
) -> (Vec<Duration>, Option<String>) {
    let mut latencies = Vec::with_capacity(events);
    let mut lines = LineBuffer::default();
    let mut body = body.into_data_stream();
    while latencies.len() < events {
        let chunk = match tokio::time::timeout_at(deadline, body.next()).await {
            Ok(Some(Ok(chunk))) => chunk,
            Ok(Some(Err(e))) => return (latencies, Some(format!("watch stream broke: {e}"))),
            Ok(None) => return (latencies, Some("the server ended a watch early".into())),
            Err(_) => break,
        };
        // One clock reading per chunk: every event in it arrived together.
        let arrived = now_nanos();
        for line in lines.push(&chunk) {
            match sent_time(&line) {
                Some(sent) => latencies.push(Duration::from_nanos(arrived.saturating_sub(sent))),
                None if is_error(&line) => {
                    let text = String::from_utf8_lossy(&line).chars().take(300).collect();
                    return (latencies, Some(text));
                }
                None => {}
            }
        }
    }
    (latencies, None)
}

/// Splits a byte stream into newline-terminated lines.
#[derive(Default)]
struct LineBuffer {
    partial: Vec<u8>,
}

impl LineBuffer {
    fn push(&mut self, chunk: &[u8]) -> Vec<Vec<u8>> {
        self.partial.extend_from_slice(chunk);
        let mut lines = Vec::new();
        while let Some(nl) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=nl).collect();
            lines.push(line);
        }
        lines
    }
}

/// The send time of an event line, found by scanning for the annotation so 1,000 watchers cost
/// the load generator little (it shares the machine with the server); falls back to decoding
/// the JSON in case a server formats it differently.
fn sent_time(line: &[u8]) -> Option<u64> {
    let needle = format!("\"{SENT}\":\"");
    let needle = needle.as_bytes();
    if let Some(at) = line.windows(needle.len()).position(|w| w == needle) {
        let digits = &line[at + needle.len()..];
        let end = digits.iter().position(|b| !b.is_ascii_digit())?;
        return std::str::from_utf8(&digits[..end]).ok()?.parse().ok();
    }
    if !line.windows(SENT.len()).any(|w| w == SENT.as_bytes()) {
        return None;
    }
    let v: Value = serde_json::from_slice(line).ok()?;
    v["object"]["metadata"]["annotations"][SENT]
        .as_str()?
        .parse()
        .ok()
}

fn is_error(line: &[u8]) -> bool {
    line.starts_with(br#"{"type":"ERROR""#)
}

#[cfg(test)]
mod tests;
