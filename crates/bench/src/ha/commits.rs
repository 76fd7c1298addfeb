//! The replicas' group commits, from their `/metrics`: how many transactions each replica's
//! store writer committed and how many writes they held.

use super::super::client::Client;

/// Per replica (in the order asked): `(transactions, writes)`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Commits(pub Vec<(u64, u64)>);

impl Commits {
    /// Read every replica's counters now; a replica that does not answer counts 0.
    pub async fn now(clients: &[Client]) -> Commits {
        let mut out = Vec::with_capacity(clients.len());
        for c in clients {
            let text = c.get("/metrics").await.unwrap_or_default();
            let text = String::from_utf8_lossy(&text);
            out.push((
                counter(&text, "flotilla_store_commits_total"),
                counter(&text, "flotilla_store_committed_writes_total"),
            ));
        }
        Commits(out)
    }

    /// What happened between `before` and now.
    pub fn since(&self, before: &Commits) -> Commits {
        Commits(
            self.0
                .iter()
                .zip(&before.0)
                .map(|(a, b)| (a.0.saturating_sub(b.0), a.1.saturating_sub(b.1)))
                .collect(),
        )
    }

    /// All replicas' `(transactions, writes)`.
    pub fn total(&self) -> (u64, u64) {
        self.0.iter().fold((0, 0), |(t, w), (a, b)| (t + a, w + b))
    }
}

/// The value of an unlabelled counter in a Prometheus text exposition (0 if absent).
fn counter(text: &str, name: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .find_map(|v| v.trim().parse::<f64>().ok())
        .map_or(0, |v| v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_read_by_exact_name() {
        let text = "# TYPE flotilla_store_commits counter\nflotilla_store_commits_total 12\n\
                    flotilla_store_committed_writes_total 96\nflotilla_store_commits_totalx 5\n";
        assert_eq!(counter(text, "flotilla_store_commits_total"), 12);
        assert_eq!(counter(text, "flotilla_store_committed_writes_total"), 96);
        assert_eq!(counter(text, "missing_total"), 0);
        let d = Commits(vec![(12, 96), (3, 3)]).since(&Commits(vec![(2, 6), (3, 3)]));
        assert_eq!(d.total(), (10, 90));
    }
}
