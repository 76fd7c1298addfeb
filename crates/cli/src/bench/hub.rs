//! The hub the benchmark starts for itself: this binary's `serve` on a free loopback port with a
//! fresh data directory, stopped with SIGTERM when the benchmark ends, also on error.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use super::kubeconfig::{self, Target};

/// How long the hub gets to write its kubeconfig.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the hub gets to drain after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// A running hub, stopped when dropped.
pub struct Hub {
    child: Child,
    data_dir: PathBuf,
    log: PathBuf,
    /// Removes the data directory when the hub was given a temporary one.
    _temp: Option<tempfile::TempDir>,
}

impl Hub {
    /// Start `flotilla serve` in `data_dir` (a new temporary directory when `None`) and wait
    /// for its kubeconfig. The caller waits for `/readyz`.
    pub fn start(data_dir: Option<&Path>) -> Result<(Hub, Target)> {
        let (temp, dir) = match data_dir {
            Some(d) => {
                let empty = match std::fs::read_dir(d) {
                    Ok(mut entries) => entries.next().is_none(),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
                    Err(e) => return Err(e).with_context(|| format!("reading {}", d.display())),
                };
                if !empty {
                    bail!(
                        "--data-dir {} is not empty: the benchmark counts the objects it stores, \
                         so give it a new or empty directory",
                        d.display()
                    );
                }
                std::fs::create_dir_all(d)
                    .with_context(|| format!("cannot create {}", d.display()))?;
                (None, d.to_path_buf())
            }
            None => {
                let t = tempfile::Builder::new()
                    .prefix("flotilla-bench-")
                    .tempdir()
                    .context("cannot create a temporary directory for the hub")?;
                let p = t.path().to_path_buf();
                (Some(t), p)
            }
        };
        let log = dir.join("hub.log");
        let log_file = std::fs::File::create(&log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let exe = std::env::current_exe().context("cannot locate the flotilla binary")?;
        let child = Command::new(exe)
            .arg("serve")
            .arg("--data-dir")
            .arg(&dir)
            .args(["--listen", "127.0.0.1:0"])
            .env("RUST_LOG", "warn")
            .env_remove("FLOTILLA_STORE")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .context("cannot start `flotilla serve`")?;
        let mut hub = Hub {
            child,
            data_dir: dir,
            log,
            _temp: temp,
        };
        let target = hub.wait_for_kubeconfig()?;
        Ok((hub, target))
    }

    /// The hub's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// An error if the hub has exited, quoting the end of its log.
    pub fn check_alive(&mut self) -> Result<()> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => bail!(
                "the hub exited ({status}); the end of its log:\n{}",
                self.log_tail()
            ),
            Err(e) => Err(e).context("cannot check on the hub process"),
        }
    }

    fn wait_for_kubeconfig(&mut self) -> Result<Target> {
        let path = self.data_dir.join("admin.kubeconfig");
        let deadline = Instant::now() + START_TIMEOUT;
        loop {
            self.check_alive()?;
            // The file may be seen half-written: read until it parses.
            if let Ok(target) = kubeconfig::read(&path) {
                return Ok(target);
            }
            if Instant::now() > deadline {
                bail!(
                    "the hub wrote no {} within {} s; the end of its log:\n{}",
                    path.display(),
                    START_TIMEOUT.as_secs(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// Stop the hub: SIGTERM, then SIGKILL if it has not drained within 15 s.
    pub fn stop(&mut self) -> Result<()> {
        if self.child.try_wait().ok().flatten().is_some() {
            return Ok(());
        }
        let pid = libc::pid_t::try_from(self.child.id()).context("process id out of range")?;
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; the pid is our own
        // child, which is not reaped until wait() below, so it cannot name another process.
        let rc = unsafe { libc::kill(pid, libc::SIGTERM) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error()).context("cannot send SIGTERM to the hub");
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.child.kill().context("cannot kill the hub")?;
        self.child.wait().context("waiting for the hub to exit")?;
        bail!(
            "the hub did not stop within {} s of SIGTERM and was killed",
            STOP_TIMEOUT.as_secs()
        )
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("warning: {e:#}");
        }
    }
}
