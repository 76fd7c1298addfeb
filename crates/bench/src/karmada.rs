//! Karmada as the peer of `bench propagation --peer karmada`: its control plane started with
//! `scripts/karmada up` of the checkout the benchmark runs from (built from Karmada's Go module,
//! pinned in tools/karmada), the members joined in Push mode with `karmadactl join`, and all of
//! it taken down with `scripts/karmada down` when the value is dropped (and by the script's
//! reaper should the benchmark die without dropping it).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::procs::{self, Rss};

/// Karmada's control plane, running.
pub struct Karmada {
    script: PathBuf,
    dir: PathBuf,
    /// Its processes, by what they are (`APISERVER`, `ETCD`, `CONTROLLER_MANAGER`, …).
    pub pids: Vec<(String, u32)>,
    /// The admin kubeconfig of karmada-apiserver.
    pub kubeconfig: PathBuf,
}

impl Karmada {
    /// `scripts/karmada up DIR` then `join DIR MEMBERS_DIR 3` (blocking: call it off the async
    /// threads). `DIR` must not exist yet.
    pub fn start(dir: &Path, members_dir: &Path, members: usize) -> Result<Karmada> {
        let script = crate::report::repo_root()
            .map(|r| r.join("scripts/karmada"))
            .filter(|s| s.exists())
            .context(
                "--peer karmada starts Karmada with scripts/karmada, which it looks for in the git \
                 checkout of the current directory: run the benchmark from a flotilla checkout",
            )?;
        let mut k = Karmada {
            script,
            dir: dir.to_path_buf(),
            pids: Vec::new(),
            kubeconfig: dir.join("karmada.kubeconfig"),
        };
        k.run(&["up".as_ref(), dir.as_os_str()])?;
        k.pids = read_pids(&dir.join("env"))?;
        k.run(&[
            "join".as_ref(),
            dir.as_os_str(),
            members_dir.as_os_str(),
            members.to_string().as_ref(),
        ])?;
        Ok(k)
    }

    fn run(&self, args: &[&std::ffi::OsStr]) -> Result<()> {
        let out = Command::new(&self.script)
            .args(args)
            .env("KARMADA_OWNER_PID", std::process::id().to_string())
            .output()
            .with_context(|| format!("cannot run {}", self.script.display()))?;
        if !out.status.success() {
            bail!(
                "{} {} failed:\n{}",
                self.script.display(),
                args.iter()
                    .map(|a| a.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join(" "),
                String::from_utf8_lossy(&out.stderr).trim_end()
            );
        }
        Ok(())
    }

    /// The memory of every process of the control plane, summed.
    pub fn rss(&self) -> Result<Rss> {
        let mut sum = Rss { now: 0, peak: 0 };
        for (what, pid) in &self.pids {
            let r = procs::rss(*pid).with_context(|| format!("Karmada's {what}"))?;
            sum.now += r.now;
            sum.peak += r.peak;
        }
        Ok(sum)
    }

    /// An error naming the first process of the control plane that has exited.
    pub fn check_alive(&self) -> Result<()> {
        for (what, pid) in &self.pids {
            if !Path::new(&format!("/proc/{pid}")).exists() {
                bail!(
                    "Karmada's {what} (pid {pid}) has exited; its logs are in {}",
                    self.dir.display()
                );
            }
        }
        Ok(())
    }

    /// The last lines of karmada-controller-manager's log.
    pub fn log_tail(&self, n: usize) -> String {
        let log = std::fs::read_to_string(self.dir.join("karmada-controller-manager.log"))
            .unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }
}

impl Drop for Karmada {
    fn drop(&mut self) {
        if let Err(e) = self.run(&["down".as_ref(), self.dir.as_os_str()]) {
            eprintln!(
                "warning: could not take Karmada down ({e:#}): run `{} down {}`",
                self.script.display(),
                self.dir.display()
            );
        }
    }
}

/// The `*_PID=` lines of the script's env file, but its reaper's.
fn read_pids(env: &Path) -> Result<Vec<(String, u32)>> {
    let text =
        std::fs::read_to_string(env).with_context(|| format!("cannot read {}", env.display()))?;
    let pids: Vec<(String, u32)> = text
        .lines()
        .filter_map(|l| l.split_once("_PID="))
        .filter(|(what, _)| *what != "REAPER")
        .filter_map(|(what, pid)| Some((what.to_string(), pid.parse().ok()?)))
        .collect();
    if pids.is_empty() {
        bail!("{} names no process", env.display());
    }
    Ok(pids)
}
