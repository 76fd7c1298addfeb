//! A set of hub replicas started with the checkout's `scripts/ha`: PostgreSQL, nats-server and
//! N `flotilla serve` replicas of this binary on loopback. [`HaSet`] runs the script's `up`,
//! `stop replica-K` (SIGKILL) and `start replica-K`, reads what it writes (`DIR/env`,
//! `DIR/replica-K/{env,kubeconfig}`), and runs `down` when dropped — on success, error or Ctrl-C
//! alike — after copying the replicas' logs out of the set's directory (which `down` removes).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};

use super::super::client::Client;
use super::super::kubeconfig;
use super::super::procs::flotilla_binary;

/// HTTP/2 connections of each replica's client.
const CONNECTIONS: usize = 4;

/// One `flotilla serve` replica of the set.
pub struct Replica {
    /// Its cluster-admin kubeconfig.
    pub kubeconfig: PathBuf,
    /// A client of it (admin credential).
    pub client: Client,
    /// Its process id (changes when it is started again).
    pub pid: u32,
}

/// A running set; taken down when dropped.
pub struct HaSet {
    script: PathBuf,
    /// The set's directory (`down` removes it).
    pub dir: PathBuf,
    /// Where the replicas' logs are copied before `down`.
    logs: PathBuf,
    /// replica-1 first.
    pub replicas: Vec<Replica>,
    /// PostgreSQL's postmaster, when the script started it.
    pub postgres_pid: Option<u32>,
    /// nats-server, when the script started it.
    pub nats_pid: Option<u32>,
    /// `down` has run.
    down: bool,
}

/// `DIR/ha` of the scripts directory, or an error saying where it was looked for.
pub fn find_script(scripts: &Path) -> Result<PathBuf> {
    let script = scripts.join("ha");
    if !script.is_file() {
        bail!(
            "no {} here: run `flotilla bench ha` from the root of the flotilla checkout, or give \
             the checkout's scripts directory with --scripts DIR",
            script.display()
        );
    }
    // The script finds its libraries next to itself; give it an absolute path.
    std::fs::canonicalize(&script).with_context(|| format!("cannot resolve {}", script.display()))
}

impl HaSet {
    /// `scripts/ha up N DIR` with this binary; `no_controllers` runs API servers only. Blocks
    /// until every replica answers `/readyz` (call it off the async threads).
    pub fn up(
        script: &Path,
        dir: &Path,
        logs: &Path,
        n: usize,
        no_controllers: bool,
    ) -> Result<HaSet> {
        let mut set = HaSet {
            script: script.to_path_buf(),
            dir: dir.to_path_buf(),
            logs: logs.to_path_buf(),
            replicas: Vec::new(),
            postgres_pid: None,
            nats_pid: None,
            down: false,
        };
        let mut cmd = set.command(&["up", &n.to_string()])?;
        if no_controllers {
            cmd.env("HA_NO_CONTROLLERS", "1");
        }
        // If the benchmark is killed outright, the script's reaper takes the set down.
        cmd.env("HA_OWNER_PID", std::process::id().to_string());
        run(cmd, &format!("scripts/ha up {n}"))?;
        let env = read_env(&dir.join("env"))?;
        set.postgres_pid = env_pid(&env, "POSTGRES_PID");
        set.nats_pid = env_pid(&env, "NATS_PID");
        for k in 1..=n {
            set.replicas.push(set.replica(k)?);
        }
        Ok(set)
    }

    /// `scripts/ha stop replica-K DIR`: SIGKILL, returns once the process is gone.
    pub async fn stop(&mut self, k: usize) -> Result<()> {
        let name = format!("replica-{k}");
        run_async(
            self.command(&["stop", &name])?,
            &format!("scripts/ha stop {name}"),
        )
        .await
    }

    /// `scripts/ha start replica-K DIR`: same port and command line; returns once it is ready.
    pub async fn start(&mut self, k: usize) -> Result<()> {
        let name = format!("replica-{k}");
        run_async(
            self.command(&["start", &name])?,
            &format!("scripts/ha start {name}"),
        )
        .await?;
        self.replicas[k - 1] = self.replica(k)?;
        Ok(())
    }

    /// Replica `k` (1-based).
    pub fn replica(&self, k: usize) -> Result<Replica> {
        let name = format!("replica-{k}");
        let env = read_env(&self.dir.join(&name).join("env"))?;
        let pid = env_pid(&env, "PID").with_context(|| format!("{name}/env has no PID"))?;
        let kubeconfig = self.dir.join(&name).join("kubeconfig");
        let target = kubeconfig::read(&kubeconfig)?;
        Ok(Replica {
            client: Client::new(&target, CONNECTIONS)?,
            kubeconfig,
            pid,
        })
    }

    /// Where the replicas' logs end up.
    pub fn logs(&self) -> &Path {
        &self.logs
    }

    /// Copy the logs out and run `scripts/ha down DIR` (blocking).
    pub fn down(&mut self) -> Result<()> {
        if self.down {
            return Ok(());
        }
        self.down = true;
        self.copy_logs();
        run(self.command(&["down"])?, "scripts/ha down")
    }

    /// `DIR/replica-K/log` → `LOGS/replica-K.log`; best effort (the logs are for reading
    /// after a failure, their absence is no reason to fail).
    fn copy_logs(&self) {
        if std::fs::create_dir_all(&self.logs).is_err() {
            return;
        }
        for k in 1..=self.replicas.len() {
            let from = self.dir.join(format!("replica-{k}")).join("log");
            let _ = std::fs::copy(&from, self.logs.join(format!("replica-{k}.log")));
        }
    }

    /// The script with `args` then the set's directory, this binary as FLOTILLA_BIN and the
    /// replicas logging warnings only (unless HA_RUST_LOG says otherwise).
    fn command(&self, args: &[&str]) -> Result<Command> {
        let mut cmd = Command::new(&self.script);
        cmd.args(args).arg(&self.dir);
        cmd.env("FLOTILLA_BIN", flotilla_binary()?);
        if std::env::var_os("HA_RUST_LOG").is_none() {
            cmd.env("HA_RUST_LOG", "warn");
        }
        Ok(cmd)
    }
}

impl Drop for HaSet {
    fn drop(&mut self) {
        if let Err(e) = self.down() {
            eprintln!("warning: {e:#}");
        }
    }
}

/// Run the script to the end; an error quoting the end of its output if it fails.
fn run(mut cmd: Command, what: &str) -> Result<()> {
    let out = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .with_context(|| format!("cannot run {what}"))?;
    outcome(out, what)
}

/// [`run`] without blocking the async threads.
async fn run_async(mut cmd: Command, what: &str) -> Result<()> {
    cmd.stdin(std::process::Stdio::null());
    let out = tokio::process::Command::from(cmd)
        .kill_on_drop(true)
        .output()
        .await
        .with_context(|| format!("cannot run {what}"))?;
    outcome(out, what)
}

fn outcome(out: std::process::Output, what: &str) -> Result<()> {
    if !out.status.success() {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        bail!(
            "{what} failed ({}):\n{}",
            out.status,
            flotilla_testkit::process::last_lines(&text, 25)
        );
    }
    Ok(())
}

/// `KEY=VALUE` lines.
fn read_env(path: &Path) -> Result<Vec<(String, String)>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(parse_env(&text))
}

fn parse_env(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The last value of `key`, as a process id (absent or empty: `None`).
fn env_pid(env: &[(String, String)], key: &str) -> Option<u32> {
    env.iter().rev().find(|(k, _)| k == key)?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_files_give_the_last_pid_and_none_when_empty() {
        let env = parse_env("REPLICAS=3\nPOSTGRES_PID=\nNATS_PID=42\nNATS_PID=43\n");
        assert_eq!(env_pid(&env, "NATS_PID"), Some(43));
        assert_eq!(env_pid(&env, "POSTGRES_PID"), None);
        assert_eq!(env_pid(&env, "PID"), None);
    }

    #[test]
    fn a_missing_script_says_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let e = find_script(dir.path()).unwrap_err().to_string();
        assert!(e.contains("--scripts DIR"), "{e}");
    }
}
