//! What a run measured: named figures, each with the target it is held to.

use std::time::Duration;

use super::stats::{ms, Summary};

/// One measured figure of one server.
#[derive(Clone, Debug)]
pub struct Figure {
    /// Stable name, to pair the figures of two servers.
    pub key: &'static str,
    /// What was measured, for the report's first column.
    pub label: String,
    /// The value, or why there is none.
    pub value: Result<Measured, Missing>,
    /// Counts that qualify the value (errors, deliveries), shown next to it.
    pub detail: Option<String>,
    /// What the figure should reach.
    pub goal: Option<Goal>,
}

/// A measured value.
#[derive(Clone, Copy, Debug)]
pub enum Measured {
    /// Operations per second.
    PerSecond(f64),
    /// A latency distribution.
    Latency(Summary),
    /// A size in bytes.
    Bytes(u64),
}

/// Why a figure has no value.
#[derive(Clone, Debug)]
pub enum Missing {
    /// The phase failed.
    Failed(String),
    /// The phase could not run (e.g. no process id to read memory from).
    Skipped(String),
}

/// The target a figure is held to.
#[derive(Clone, Copy, Debug)]
pub enum Goal {
    /// At least this many per second.
    AtLeastPerSecond(f64),
    /// A 99th percentile at or below this.
    P99AtMost(Duration),
    /// At most this many bytes.
    AtMostBytes(u64),
}

impl Figure {
    /// A figure with a value or the error that kept it from being measured.
    pub fn new(
        key: &'static str,
        label: String,
        goal: Option<Goal>,
        value: anyhow::Result<(Measured, Option<String>)>,
    ) -> Figure {
        let (value, detail) = match value {
            Ok((m, detail)) => (Ok(m), detail),
            Err(e) => (Err(Missing::Failed(format!("{e:#}"))), None),
        };
        Figure {
            key,
            label,
            value,
            detail,
            goal,
        }
    }

    /// Whether the value meets the goal; `None` without a goal or a value.
    pub fn met(&self) -> Option<bool> {
        let m = self.value.as_ref().ok()?;
        Some(match (self.goal?, m) {
            (Goal::AtLeastPerSecond(g), Measured::PerSecond(v)) => *v >= g,
            (Goal::P99AtMost(g), Measured::Latency(s)) => s.p99 <= g,
            (Goal::AtMostBytes(g), Measured::Bytes(b)) => *b <= g,
            _ => return None,
        })
    }

    /// The value with its detail, for a table cell.
    pub fn value_text(&self) -> String {
        let text = match &self.value {
            Ok(m) => m.text(),
            Err(Missing::Failed(e)) => format!("failed: {e}"),
            Err(Missing::Skipped(why)) => format!("not measured: {why}"),
        };
        match &self.detail {
            Some(d) => format!("{text} ({d})"),
            None => text,
        }
    }
}

impl Measured {
    /// The number two servers are compared by: the rate, the p99, or the size.
    pub fn headline(&self) -> f64 {
        match self {
            Measured::PerSecond(r) => *r,
            Measured::Latency(s) => s.p99.as_secs_f64(),
            Measured::Bytes(b) => *b as f64,
        }
    }

    /// The value for a table cell.
    pub fn text(&self) -> String {
        match self {
            Measured::PerSecond(r) => format!("{}/s", thousands(r.round() as u64)),
            Measured::Latency(s) => format!("{} / {}", ms(s.p50), ms(s.p99)),
            Measured::Bytes(b) => mb(*b),
        }
    }
}

impl Goal {
    /// The goal for a table cell.
    pub fn text(&self) -> String {
        match self {
            Goal::AtLeastPerSecond(r) => format!("≥ {}/s", thousands(r.round() as u64)),
            Goal::P99AtMost(d) => format!("p99 ≤ {} ms", d.as_millis()),
            Goal::AtMostBytes(b) => format!("≤ {} MB", b / 1_000_000),
        }
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    // Digits left before the next comma: the leading group holds 1–3 of them.
    let mut left = (digits.len() + 2) % 3 + 1;
    for c in digits.chars() {
        if left == 0 {
            out.push(',');
            left = 3;
        }
        out.push(c);
        left -= 1;
    }
    out
}

/// Bytes as MiB with one decimal.
pub fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / 1024.0 / 1024.0)
}

/// Bytes as decimal megabytes (the unit of the memory target) with MiB beside them.
fn mb(bytes: u64) -> String {
    format!(
        "{:.0} MB ({:.0} MiB)",
        bytes as f64 / 1e6,
        bytes as f64 / 1024.0 / 1024.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn latency(p99_ms: u64) -> Measured {
        Measured::Latency(Summary {
            count: 1,
            p50: Duration::from_millis(1),
            p95: Duration::from_millis(p99_ms),
            p99: Duration::from_millis(p99_ms),
            max: Duration::from_millis(p99_ms),
        })
    }

    #[test]
    fn goals_are_met_or_not() {
        let cases = [
            (
                Goal::AtLeastPerSecond(8000.0),
                Measured::PerSecond(8000.0),
                true,
            ),
            (
                Goal::AtLeastPerSecond(8000.0),
                Measured::PerSecond(7999.0),
                false,
            ),
            (Goal::P99AtMost(Duration::from_millis(5)), latency(5), true),
            (Goal::P99AtMost(Duration::from_millis(5)), latency(6), false),
            (
                Goal::AtMostBytes(400_000_000),
                Measured::Bytes(400_000_000),
                true,
            ),
            (
                Goal::AtMostBytes(400_000_000),
                Measured::Bytes(400_000_001),
                false,
            ),
        ];
        for (goal, value, want) in cases {
            let f = Figure::new("k", "l".into(), Some(goal), Ok((value, None)));
            assert_eq!(f.met(), Some(want), "{goal:?} {value:?}");
        }
        let failed = Figure::new("k", "l".into(), None, Err(anyhow::anyhow!("boom")));
        assert_eq!(failed.met(), None);
        assert_eq!(failed.value_text(), "failed: boom");
    }

    #[test]
    fn cells() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(8017), "8,017");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(Measured::PerSecond(8016.6).text(), "8,017/s");
        assert_eq!(Measured::Bytes(423_624_704).text(), "424 MB (404 MiB)");
        assert_eq!(Goal::AtMostBytes(400_000_000).text(), "≤ 400 MB");
        assert_eq!(
            Goal::P99AtMost(Duration::from_millis(50)).text(),
            "p99 ≤ 50 ms"
        );
        let f = Figure::new(
            "k",
            "l".into(),
            None,
            Ok((latency(13), Some("2 errors".into()))),
        );
        assert_eq!(f.value_text(), "1.00 ms / 13.00 ms (2 errors)");
    }
}
