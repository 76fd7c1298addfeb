//! Rendering a [`Decision`] for `flotilla explain placement`: one row per cluster, in name order,
//! saying whether it was selected, its score and replicas, or why it was left out.

use std::fmt::Write;

use crate::framework::{Decision, Outcome};

/// The decision as a table (`CLUSTER  RESULT  SCORE  REPLICAS  REASON`), preceded by the
/// affinity group used and followed by the error, if any.
pub fn render(decision: &Decision) -> String {
    let rows: Vec<[String; 5]> = decision
        .explanation
        .iter()
        .map(|v| {
            let result = match v.outcome {
                Outcome::Filtered => "filtered",
                Outcome::NotSelected => "not-selected",
                Outcome::Selected => "selected",
            };
            let dash = || "-".to_owned();
            [
                v.cluster.clone(),
                result.to_owned(),
                v.score.map_or_else(dash, |s| s.to_string()),
                v.replicas.map_or_else(dash, |r| r.to_string()),
                v.filtered.clone().unwrap_or_default(),
            ]
        })
        .collect();
    let header = ["CLUSTER", "RESULT", "SCORE", "REPLICAS", "REASON"].map(str::to_owned);
    let mut widths = [0usize; 5];
    for row in std::iter::once(&header).chain(&rows) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    if let Some(a) = &decision.affinity_name {
        let _ = writeln!(out, "affinity group: {a}");
    }
    for row in std::iter::once(&header).chain(&rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i == 4 {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}  ", w = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if let Some(e) = &decision.error {
        let _ = writeln!(out, "error: {e}");
    }
    out
}
