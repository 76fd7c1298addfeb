//! The processes the benchmarks start (the hub and the pull agents) and what they read of them.
//! The process itself is `flotilla_testkit`'s [`Proc`] (logs to a file, stopped by its own
//! process id — SIGTERM, then SIGKILL — when dropped, so an error or Ctrl-C never leaves one
//! behind); here: which binary it runs, and its resident memory.

pub mod cpu;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub use flotilla_testkit::process::Proc;

/// The `flotilla` binary the benchmark runs in: the hubs and agents it starts are this build.
pub fn flotilla_binary() -> Result<PathBuf> {
    std::env::current_exe().context("cannot locate the flotilla binary")
}

/// Start this binary with `args`, `RUST_LOG` from [`log_filter`] and stderr/stdout into `log`.
pub fn start(name: &str, args: &[&OsStr], log: &Path) -> Result<Proc> {
    Proc::start(name, &flotilla_binary()?, args, &log_filter(), log)
}

/// The `RUST_LOG` of the processes a benchmark starts: `warn`, or `FLOTILLA_BENCH_LOG` to look
/// inside a run (say `warn,flotilla_api::handlers=debug` for every request the hub serves).
pub fn log_filter() -> String {
    std::env::var("FLOTILLA_BENCH_LOG").unwrap_or_else(|_| "warn".to_owned())
}

/// Whether the logs of the started processes are kept after a run that went well too: they
/// are, when `FLOTILLA_BENCH_LOG` asked for more of them.
pub fn logs_wanted() -> bool {
    std::env::var_os("FLOTILLA_BENCH_LOG").is_some()
}

/// Resident memory of a process from `/proc/PID/status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rss {
    /// VmRSS: resident now, in bytes.
    pub now: u64,
    /// VmHWM: the highest resident size so far, in bytes.
    pub peak: u64,
}

/// Read the resident memory of process `pid`.
pub fn rss(pid: u32) -> Result<Rss> {
    let path = format!("/proc/{pid}/status");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {path}: has the process exited?"))?;
    parse_rss(&text).with_context(|| format!("{path} has no VmRSS or VmHWM line"))
}

fn parse_rss(status: &str) -> Option<Rss> {
    let kb = |key: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        let n: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(n * 1024)
    };
    Some(Rss {
        now: kb("VmRSS:")?,
        peak: kb("VmHWM:")?,
    })
}

#[cfg(test)]
mod tests;
