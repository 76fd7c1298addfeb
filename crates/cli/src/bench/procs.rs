//! The processes the member-cluster benchmarks start (the hub and the pull agents): each logs to a file, can be
//! asked whether it is still alive (quoting its log when not), and is stopped by its own process
//! id — SIGTERM, then SIGKILL — when dropped, so an error or Ctrl-C never leaves one behind.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// How long a process gets to drain after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// A child process, stopped when dropped.
pub struct Proc {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Proc {
    /// Start this binary with `args`, `RUST_LOG=warn` and stderr/stdout into `log`.
    pub fn start(name: &str, args: &[&std::ffi::OsStr], log: &Path) -> Result<Proc> {
        let exe = std::env::current_exe().context("cannot locate the flotilla binary")?;
        let out = std::fs::File::create(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let err = out
            .try_clone()
            .with_context(|| format!("cannot reopen {}", log.display()))?;
        let child = Command::new(exe)
            .args(args)
            .env("RUST_LOG", "warn")
            // The benchmark decides where the hub stores data and listens, not the environment.
            .env_remove("FLOTILLA_STORE")
            .env_remove("FLOTILLA_DATA_DIR")
            .env_remove("FLOTILLA_LISTEN")
            .env_remove("KUBECONFIG")
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .with_context(|| format!("cannot start the {name}"))?;
        Ok(Proc {
            name: name.to_string(),
            child,
            log: log.to_path_buf(),
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// An error if the process has exited, quoting the end of its log.
    pub fn check_alive(&mut self) -> Result<()> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => bail!(
                "the {} exited ({status}); the end of its log {}:\n{}",
                self.name,
                self.log.display(),
                self.log_tail(20)
            ),
            Err(e) => Err(e).with_context(|| format!("cannot check on the {}", self.name)),
        }
    }

    /// The last `n` lines of its log.
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    /// Stop it: SIGTERM, then SIGKILL if it has not exited within 15 s.
    pub fn stop(&mut self) -> Result<()> {
        if self.child.try_wait().ok().flatten().is_some() {
            return Ok(());
        }
        let pid = libc::pid_t::try_from(self.child.id()).context("process id out of range")?;
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; the pid is our own
        // child, not reaped until wait() below, so it cannot name another process.
        let rc = unsafe { libc::kill(pid, libc::SIGTERM) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("cannot send SIGTERM to the {}", self.name));
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child
            .kill()
            .with_context(|| format!("cannot kill the {}", self.name))?;
        self.child.wait()?;
        bail!(
            "the {} did not stop within {} s of SIGTERM and was killed",
            self.name,
            STOP_TIMEOUT.as_secs()
        )
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("warning: {e:#}");
        }
    }
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
mod tests {
    use super::*;

    #[test]
    fn reads_rss_and_peak() {
        let text =
            "Name:\tflotilla\nVmPeak:\t  900000 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\n";
        assert_eq!(
            parse_rss(text),
            Some(Rss {
                now: 40 * 1024 * 1024,
                peak: 50 * 1024 * 1024
            })
        );
        assert_eq!(parse_rss("Name:\tx\nVmRSS:\t 1 kB\n"), None);
    }

    #[test]
    fn reads_this_process() {
        let r = rss(std::process::id()).unwrap();
        assert!(r.now > 0 && r.peak >= r.now, "{r:?}");
    }
}
