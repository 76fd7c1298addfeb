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
mod tests;
