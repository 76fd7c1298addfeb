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
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
        let s = summarize(v).unwrap();
        assert_eq!(s.count, 100);
        assert_eq!(s.p50, Duration::from_millis(50));
        assert_eq!(s.p95, Duration::from_millis(95));
        assert_eq!(s.p99, Duration::from_millis(99));
        assert_eq!(s.max, Duration::from_millis(100));
    }

    #[test]
    fn percentiles_of_few_values() {
        let table: &[(&[u64], f64, u64)] = &[
            (&[7], 0.5, 7),
            (&[7], 0.99, 7),
            (&[1, 2], 0.5, 1),
            (&[1, 2], 0.99, 2),
            (&[1, 2, 3], 0.5, 2),
            // One stall in 50 requests is above the 98th percentile, so p99 shows it.
            (&[[1; 49].as_slice(), &[900]].concat(), 0.99, 900),
        ];
        for (values, p, want) in table {
            let sorted: Vec<Duration> = values.iter().map(|v| Duration::from_millis(*v)).collect();
            let mut sorted = sorted;
            sorted.sort();
            assert_eq!(
                percentile(&sorted, *p),
                Some(Duration::from_millis(*want)),
                "{values:?} p{p}"
            );
        }
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(summarize(Vec::new()), None);
    }

    #[test]
    fn schedule_is_even_and_does_not_drift() {
        assert_eq!(due(0, 2000), Duration::ZERO);
        assert_eq!(due(1, 2000), Duration::from_micros(500));
        assert_eq!(due(3, 3), Duration::from_secs(1));
        // 1/3 s does not add up exactly; computing from i keeps request 3,000,000 on time.
        assert_eq!(due(3_000_000, 3), Duration::from_secs(1_000_000));
        assert_eq!(
            due(5, 0),
            Duration::from_secs(5),
            "a zero rate counts as 1/s"
        );
    }

    #[test]
    fn milliseconds() {
        assert_eq!(ms(Duration::from_micros(1450)), "1.45 ms");
    }
}
