//! Latency percentiles and the fixed schedule of open-loop load.

use std::time::Duration;

/// Percentiles of a set of latencies.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// How many latencies.
    pub count: usize,
    /// Median.
    pub p50: Duration,
    /// 95th percentile.
    pub p95: Duration,
    /// 99th percentile.
    pub p99: Duration,
    /// Largest.
    pub max: Duration,
}

/// Summarize `latencies` (nearest-rank percentiles); `None` when there are none.
pub fn summarize(mut latencies: Vec<Duration>) -> Option<Summary> {
    latencies.sort_unstable();
    Some(Summary {
        count: latencies.len(),
        p50: percentile(&latencies, 0.50)?,
        p95: percentile(&latencies, 0.95)?,
        p99: percentile(&latencies, 0.99)?,
        max: *latencies.last()?,
    })
}

/// The nearest-rank `p` percentile (0 < p ≤ 1) of sorted values: the smallest value that at
/// least `p` of all values are at or below.
pub fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (sorted.len() as f64 * p).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

/// When request `i` of an open-loop load of `rate` requests per second is due, counted from
/// the start. Computed from `i` rather than by adding intervals, so the schedule never drifts.
pub fn due(i: u64, rate: u64) -> Duration {
    let rate = rate.max(1);
    Duration::from_nanos((u128::from(i) * 1_000_000_000 / u128::from(rate)) as u64)
}

/// Milliseconds with two decimals, for reports.
pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

#[cfg(test)]
mod tests;
