//! Where the CPU went during a throughput run: CPU seconds of each replica, of PostgreSQL (the
//! postmaster and its backends), of nats-server and of the benchmark itself (the load
//! generator), read from `/proc/PID/stat` before and after. From them the report says which
//! part would scale out with more cores and which stays on one server.

use crate::procs::cpu::{own, tree};

/// CPU seconds used so far by each part.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Usage {
    /// Each replica's, replica-1 first.
    pub replicas: Vec<f64>,
    /// PostgreSQL's: the postmaster, its reaped children and its live backends.
    pub postgres: f64,
    /// nats-server's.
    pub nats: f64,
    /// This process's: the clients.
    pub load: f64,
}

impl Usage {
    /// Read the counters now.
    pub fn now(replicas: &[u32], postgres: Option<u32>, nats: Option<u32>) -> Usage {
        Usage {
            replicas: replicas.iter().map(|p| own(*p)).collect(),
            postgres: postgres.map_or(0.0, tree),
            nats: nats.map_or(0.0, own),
            load: own(std::process::id()),
        }
    }

    /// What was used between `before` and `self`.
    pub fn since(&self, before: &Usage) -> Usage {
        Usage {
            replicas: self
                .replicas
                .iter()
                .zip(&before.replicas)
                .map(|(a, b)| (a - b).max(0.0))
                .collect(),
            postgres: (self.postgres - before.postgres).max(0.0),
            nats: (self.nats - before.nats).max(0.0),
            load: (self.load - before.load).max(0.0),
        }
    }

    /// All the replicas' together.
    pub fn replicas_total(&self) -> f64 {
        self.replicas.iter().sum()
    }

    /// Everything.
    pub fn total(&self) -> f64 {
        self.replicas_total() + self.postgres + self.nats + self.load
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_used_some_cpu_and_since_never_goes_negative() {
        let mut spin = 0u64;
        for i in 0..20_000_000u64 {
            spin = spin.wrapping_add(i * i);
        }
        assert!(spin > 0);
        let now = Usage::now(&[std::process::id()], None, None);
        assert!(now.load > 0.0 && now.replicas[0] > 0.0);
        let later = Usage::default().since(&now);
        assert_eq!(later.total(), 0.0);
    }
}
