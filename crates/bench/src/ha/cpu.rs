//! Where the CPU went during a throughput run: CPU seconds of each replica, of PostgreSQL (the
//! postmaster and its backends), of nats-server and of the benchmark itself (the load
//! generator), read from `/proc/PID/stat` before and after. From them the report says which
//! part would scale out with more cores and which stays on one server.

use std::path::Path;

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

/// Clock ticks per second of /proc's counters.
fn ticks() -> f64 {
    // SAFETY: sysconf reads a constant of the system and touches no memory of ours.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// The fields of `/proc/PID/stat` after the command name (which may hold spaces): index 0 is
/// the state (field 3 of proc(5)), so field N is at N − 3.
fn stat_fields(pid: u32) -> Option<Vec<u64>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<Vec<u64>> {
    let rest = &text[text.rfind(')')? + 1..];
    // The state is a letter; keep its place with a 0.
    Some(
        rest.split_whitespace()
            .map(|f| f.parse().unwrap_or(0))
            .collect(),
    )
}

/// utime + stime of one process, in seconds (0 when it is gone).
fn own(pid: u32) -> f64 {
    stat_fields(pid)
        .and_then(|f| Some((f.get(11)? + f.get(12)?) as f64 / ticks()))
        .unwrap_or(0.0)
}

/// A process with its reaped children (cutime + cstime) and its live children.
fn tree(pid: u32) -> f64 {
    let Some(f) = stat_fields(pid) else {
        return 0.0;
    };
    let mut total = f.get(11..15).map_or(0, |t| t.iter().sum::<u64>()) as f64 / ticks();
    let Ok(dir) = std::fs::read_dir(Path::new("/proc")) else {
        return total;
    };
    for entry in dir.flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if stat_fields(child).and_then(|f| f.get(1).copied()) == Some(u64::from(pid)) {
            total += own(child);
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_spaces_in_the_name_parse() {
        let line = "42 (postgres: bench db) S 7 42 42 0 -1 4194560 100 0 0 0 250 50 3 4 20 0";
        let f = parse_stat(line).unwrap();
        assert_eq!(f[1], 7, "ppid");
        assert_eq!((f[11], f[12], f[13], f[14]), (250, 50, 3, 4));
    }

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
