//! The hub `bench api` starts for itself: this binary's `serve` on a free loopback port with a
//! fresh data directory (started by `flotilla_testkit`'s [`Serve`], the launcher the end-to-end
//! suites use too), stopped with SIGTERM when the benchmark ends, also on error (a [`Proc`]).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use flotilla_testkit::hub::Serve;

use super::kubeconfig::{self, Target};
use super::procs::{self, Proc};

/// How long the hub gets to write its kubeconfig.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// A running hub, stopped when dropped.
pub struct Hub {
    /// Declared first: the process stops before its data directory is removed.
    process: Proc,
    data_dir: PathBuf,
    /// Removes the data directory when the hub was given a temporary one.
    _temp: Option<tempfile::TempDir>,
}

impl Hub {
    /// Start `flotilla serve` in `data_dir` (a new temporary directory when `None`) and wait
    /// for its kubeconfig. The caller waits for `/readyz`.
    pub fn start(data_dir: Option<&Path>, args: &[&str]) -> Result<(Hub, Target)> {
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
        let process = Serve::new(&procs::flotilla_binary()?, &dir)
            .args(args)
            .rust_log(&procs::log_filter())
            .start()?;
        let mut hub = Hub {
            process,
            data_dir: dir,
            _temp: temp,
        };
        let target = hub.wait_for_kubeconfig()?;
        Ok((hub, target))
    }

    /// The hub's data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// The hub's process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// An error if the hub has exited, quoting the end of its log.
    pub fn check_alive(&mut self) -> Result<()> {
        self.process.check_alive()
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
                    self.process.log_tail(20)
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stop the hub: SIGTERM, then SIGKILL if it has not drained within 15 s.
    pub fn stop(&mut self) -> Result<()> {
        self.process.stop()
    }
}
