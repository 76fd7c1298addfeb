//! Cross-replica watch delivery: a watch on replica-1 while ConfigMaps are created at a fixed
//! rate (open loop) through replica-2 and replica-3 in turn. A latency runs from a create's
//! answer arriving at the client to its ADDED event arriving on replica-1's watch — the commit,
//! the announcement on NATS, replica-1 reading the log and the bytes on the wire. Every created
//! object must arrive exactly once, in resourceVersion order.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::ProgressBar;

use super::super::client::Client;
use super::super::open_loop::OpenLoop;
use super::super::stats::{self, Summary};
use super::load::{self, Created};
use super::watch::{self, Watcher};

/// How long the watch gets for the last events after the last create was answered.
const GRACE: Duration = Duration::from_secs(10);

/// What the phase measured.
#[derive(Debug)]
pub struct Delivery {
    /// Creates offered per second.
    pub rate: u64,
    /// Creates offered.
    pub offered: usize,
    /// Acknowledged creates.
    pub created: usize,
    /// Failed creates, and the first failure.
    pub create_errors: (usize, Option<String>),
    /// From a create's answer to its event on replica-1, over the delivered creates.
    pub latency: Option<Summary>,
    /// Events that reached replica-1 before their create's answer reached the client (counted
    /// as 0 in the latencies).
    pub before_answer: usize,
    /// The events held against the creates.
    pub check: watch::Check,
    /// The watch's first error, if any.
    pub watch_error: Option<String>,
}

/// The resourceVersion of `ns`'s ConfigMap list on `client`: where a watch starts.
pub async fn list_rv(client: &Client, ns: &str) -> Result<u64> {
    let body = client
        .get(&format!("/api/v1/namespaces/{ns}/configmaps?limit=1"))
        .await?;
    load::resource_version(&body).context("reading the list's resourceVersion")
}

/// Watch `ns` on `watched` while creating `rate`/s for `duration` through `writers` in turn.
pub async fn run(
    watched: &Client,
    writers: &[Client],
    ns: &str,
    rate: u64,
    duration: Duration,
    bar: &ProgressBar,
) -> Result<Delivery> {
    let from = list_rv(watched, ns).await?;
    let watcher = Watcher::start(vec![watched.clone()], ns, from);
    // Let the watch open before the first create.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let offered = (rate as f64 * duration.as_secs_f64()).round() as usize;
    bar.set_length(offered as u64);
    let sent = OpenLoop::<Created>::new();
    let writers = writers.to_vec();
    let ns_owned = ns.to_string();
    let bar2 = bar.clone();
    sent.send(offered, rate, Instant::now(), move |i| {
        let (client, ns, bar) = (
            writers[i % writers.len()].clone(),
            ns_owned.clone(),
            bar2.clone(),
        );
        async move {
            let r = load::create(&client, &ns, &format!("d-{i}"))
                .await
                .map_err(|e| format!("{e:#}"));
            bar.inc(1);
            r
        }
    })
    .await;
    let (acked, create_errors) = sent.take();
    let deadline = Instant::now() + GRACE;
    while watcher.events() < acked.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let log = watcher.stop();
    let check = watch::check(&log.events, &acked);
    let (latencies, before_answer) = latencies(&log.events, &acked);
    Ok(Delivery {
        rate,
        offered,
        created: acked.len(),
        create_errors,
        latency: stats::summarize(latencies),
        before_answer,
        check,
        watch_error: log.first_error,
    })
}

/// From each create's answer to its ADDED event (0 when the event came first, counted).
fn latencies(events: &[watch::Event], acked: &[Created]) -> (Vec<Duration>, usize) {
    let arrived: HashMap<&str, Instant> = events
        .iter()
        .filter(|e| e.kind == "ADDED")
        .map(|e| (e.name.as_str(), e.at))
        .collect();
    let mut early = 0;
    let mut out = Vec::with_capacity(acked.len());
    for c in acked {
        if let Some(at) = arrived.get(c.name.as_str()) {
            if *at < c.acked {
                early += 1;
            }
            out.push(at.saturating_duration_since(c.acked));
        }
    }
    (out, early)
}
