//! A child process of a test or a benchmark (a hub, a pull agent): it logs to a file, can be asked
//! whether it is still alive (quoting its log when not), and is stopped by its own process id —
//! SIGTERM, then SIGKILL — when dropped, so a failed assertion, an error or Ctrl-C never leaves
//! one behind.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// How long a process gets to drain after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// The environment variables that would override, from the caller's shell, where a hub stores
/// its data, where it listens or which cluster a command talks to: whoever starts the process
/// decides those with arguments.
const SCRUBBED_ENV: [&str; 4] = [
    "FLOTILLA_STORE",
    "FLOTILLA_DATA_DIR",
    "FLOTILLA_LISTEN",
    "KUBECONFIG",
];

/// A child process, stopped when dropped.
pub struct Proc {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Proc {
    /// Start `binary` with `args` and `RUST_LOG=rust_log`, stdout and stderr into `log` (created
    /// or truncated), no stdin, and without [`SCRUBBED_ENV`]. `name` says which process an error
    /// is about ("hub", "agent for member-1").
    pub fn start(
        name: &str,
        binary: &Path,
        args: &[&OsStr],
        rust_log: &str,
        log: &Path,
    ) -> Result<Proc> {
        Self::start_with_env(name, binary, args, rust_log, log, &[])
    }

    /// [`Proc::start`] with `env` added to its environment (e.g. `LD_PRELOAD` of libfaketime
    /// for a process whose clock is off).
    pub fn start_with_env(
        name: &str,
        binary: &Path,
        args: &[&OsStr],
        rust_log: &str,
        log: &Path,
        env: &[(&str, &str)],
    ) -> Result<Proc> {
        let out = std::fs::File::create(log)
            .with_context(|| format!("cannot create {}", log.display()))?;
        let err = out
            .try_clone()
            .with_context(|| format!("cannot reopen {}", log.display()))?;
        let mut command = Command::new(binary);
        command.args(args).env("RUST_LOG", rust_log);
        for var in SCRUBBED_ENV {
            command.env_remove(var);
        }
        command.envs(env.iter().copied());
        let child = command
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .with_context(|| format!("cannot start the {name} ({})", binary.display()))?;
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

    /// Its log file.
    pub fn log_path(&self) -> &Path {
        &self.log
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
        last_lines(&std::fs::read_to_string(&self.log).unwrap_or_default(), n)
    }

    /// Stop it: SIGTERM, then SIGKILL if it has not exited within 15 s (an error then, as a
    /// process that does not drain is a finding).
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
        self.kill()?;
        bail!(
            "the {} did not stop within {} s of SIGTERM and was killed",
            self.name,
            STOP_TIMEOUT.as_secs()
        )
    }

    /// SIGKILL and wait: no chance to drain or flush anything (a crash, for tests of recovery).
    pub fn kill(&mut self) -> Result<()> {
        if self.child.try_wait().ok().flatten().is_some() {
            return Ok(());
        }
        self.child
            .kill()
            .with_context(|| format!("cannot kill the {}", self.name))?;
        self.child.wait()?;
        Ok(())
    }
}

/// The last `n` lines of `text`.
pub fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

impl Drop for Proc {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("warning: {e:#}");
        }
    }
}

#[cfg(test)]
mod tests;
