//! Open-loop latency: requests are sent at fixed times whatever the server does, and each
//! latency counts from the time its request was due. A server that stalls for 100 ms at
//! 2,000 requests/s thus shows 200 slow requests, not one (no coordinated omission).
//!
//! A plain thread paces the requests: tokio's timer has 1 ms resolution, which at 2,000/s
//! would bunch requests in pairs and add up to a millisecond of the generator's own delay to
//! every latency; `std::thread::sleep` wakes within tens of microseconds.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use tokio::sync::mpsc;

use super::super::client::Client;
use super::super::stats::{self, Summary};

/// A request not answered within this long counts as this long (a lower bound) and as an
/// error; it bounds how long a phase can overrun its duration.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The outcome of an open-loop phase.
#[derive(Debug)]
pub struct OpenLoop {
    /// Latencies of the answered requests and of the timed-out ones (as `REQUEST_TIMEOUT`).
    pub summary: Summary,
    /// Requests sent.
    pub sent: usize,
    /// Requests answered with an error status or failed outright (not in the percentiles).
    pub errors: usize,
    /// Requests that timed out.
    pub timeouts: usize,
    /// The first failure.
    pub first_error: Option<String>,
    /// How late the pacer sent its latest request: the generator's own share of the latencies.
    pub max_lag: Duration,
}

impl OpenLoop {
    /// What qualifies the percentiles.
    pub fn detail(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.timeouts > 0 {
            parts.push(format!(
                "{} of {} timed out after {} s",
                self.timeouts,
                self.sent,
                REQUEST_TIMEOUT.as_secs()
            ));
        }
        if let Some(e) = &self.first_error {
            parts.push(format!("{} errors, first: {e}", self.errors));
        }
        if self.max_lag > Duration::from_millis(5) {
            parts.push(format!(
                "load generator up to {} late",
                stats::ms(self.max_lag)
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

enum Sample {
    Answered(Duration),
    TimedOut,
    Failed(String),
}

/// Send `GET paths[i % len]` at `rate` per second for `duration`.
pub async fn get(
    client: &Client,
    paths: Vec<String>,
    rate: u64,
    duration: Duration,
    bar: &ProgressBar,
) -> Result<OpenLoop> {
    anyhow::ensure!(!paths.is_empty(), "no paths to request");
    let total = rate * duration.as_secs().max(1);
    let paths = Arc::new(paths);
    let (tx, mut rx) = mpsc::unbounded_channel::<Sample>();
    let stop = Arc::new(AtomicBool::new(false));
    let _stop_on_drop = StopOnDrop(stop.clone());
    let lag = Arc::new(AtomicU64::new(0));
    let handle = tokio::runtime::Handle::current();
    let start = Instant::now() + Duration::from_millis(20);
    {
        let (client, stop, lag) = (client.clone(), stop.clone(), lag.clone());
        std::thread::Builder::new()
            .name("bench-pacer".into())
            .spawn(move || {
                for i in 0..total {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let due = start + stats::due(i, rate);
                    let now = Instant::now();
                    if due > now {
                        std::thread::sleep(due - now);
                    }
                    let late = due.elapsed().as_nanos() as u64;
                    lag.fetch_max(late, Ordering::Relaxed);
                    let (client, paths, tx) = (client.clone(), paths.clone(), tx.clone());
                    handle.spawn(async move {
                        let path = &paths[(i as usize) % paths.len()];
                        let sample =
                            match tokio::time::timeout(REQUEST_TIMEOUT, client.get(path)).await {
                                Ok(Ok(_)) => Sample::Answered(due.elapsed()),
                                Ok(Err(e)) => Sample::Failed(format!("{e:#}")),
                                Err(_) => Sample::TimedOut,
                            };
                        let _ = tx.send(sample);
                    });
                }
            })
            .context("cannot start the pacer thread")?;
    }
    let mut latencies = Vec::with_capacity(total as usize);
    let (mut errors, mut timeouts, mut first_error) = (0, 0, None);
    let deadline = tokio::time::Instant::from_std(start) + duration + REQUEST_TIMEOUT * 2;
    // Every sender is dropped once the pacer is done and the last request has answered.
    while let Ok(Some(sample)) = tokio::time::timeout_at(deadline, rx.recv()).await {
        bar.inc(1);
        match sample {
            Sample::Answered(d) => latencies.push(d),
            Sample::TimedOut => {
                timeouts += 1;
                latencies.push(REQUEST_TIMEOUT);
            }
            Sample::Failed(e) => {
                errors += 1;
                first_error.get_or_insert(e);
            }
        }
    }
    let sent = latencies.len() + errors;
    let summary = stats::summarize(latencies).with_context(|| {
        format!(
            "no request was answered: {}",
            first_error.as_deref().unwrap_or("none came back in time")
        )
    })?;
    Ok(OpenLoop {
        summary,
        sent,
        errors,
        timeouts,
        first_error,
        max_lag: Duration::from_nanos(lag.load(Ordering::Relaxed)),
    })
}

/// Stops the pacer if the phase is abandoned (an error or Ctrl-C upstream).
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
