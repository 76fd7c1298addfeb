//! Real member clusters for end-to-end tests, started by `scripts/members`.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use flotilla_testkit::Members;
//! // Three fresh clusters, torn down when `members` is dropped (also when the test panics).
//! let members = tokio::task::spawn_blocking(|| Members::up(3)).await??;
//! let client = members.client("member-1").await?;
//! members.stop("member-2")?; // an outage: its processes stop, its data stays in etcd
//! members.start("member-2")?; // back, once /readyz answers
//! # Ok(()) }
//! ```
//!
//! * With `FLOTILLA_MEMBERS_DIR=DIR` set, [`Members::up`] reuses the set running in `DIR` (started by
//!   `scripts/members up N DIR`) and never stops it; if `DIR` does not exist yet it starts a set
//!   there and leaves it running for the next test run. This saves the ~30-60 s of a fresh start.
//! * Otherwise each [`Members::up`] starts its own set in a temporary directory. The set is ended by
//!   `Drop`, and also by a watcher process if the test process dies without unwinding (abort,
//!   SIGKILL), because the script is told the test's PID (`MEMBERS_OWNER_PID`).
//! * [`Members::shared`] is one set for every test of a test binary that only reads and writes
//!   objects; a test that stops members must use its own set from [`Members::up`].
//!
//! The calls that run the script block (a fresh start takes tens of seconds, a cold `members build`
//! much longer); from async code call them through `tokio::task::spawn_blocking`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use anyhow::{bail, Context, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};

/// Environment variable naming a directory with a running (or to be started) member set to reuse.
pub const MEMBERS_DIR_ENV: &str = "FLOTILLA_MEMBERS_DIR";
/// Environment variable overriding the path of `scripts/members`.
pub const MEMBERS_SCRIPT_ENV: &str = "FLOTILLA_MEMBERS_SCRIPT";

/// One member cluster of a set, as `DIR/member-K/env` describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// `member-K`.
    pub name: String,
    /// `https://127.0.0.1:PORT`.
    pub server: String,
    /// Port of its kube-apiserver on 127.0.0.1.
    pub port: u16,
    /// `topology.kubernetes.io/region` of its nodes (`eu`, `us`, `ap`, round-robin).
    pub region: String,
    /// `topology.kubernetes.io/zone` of its nodes (`eu-a`, `us-a`, `ap-a`, then `eu-b`, …).
    pub zone: String,
    /// Its cluster-admin kubeconfig.
    pub kubeconfig: PathBuf,
}

/// A set of member clusters sharing one etcd.
#[derive(Debug)]
pub struct Members {
    dir: PathBuf,
    members: Vec<Member>,
    /// Whether this value started the set and so ends it on drop.
    owned: bool,
    /// The script that runs the set.
    script: Script,
}

impl Members {
    /// Starts `n` member clusters (`member-1` … `member-n`), or reuses the set in
    /// `$FLOTILLA_MEMBERS_DIR` when that variable is set (it must have at least `n` running members).
    pub fn up(n: usize) -> Result<Members> {
        if let Some(dir) = std::env::var_os(MEMBERS_DIR_ENV).filter(|d| !d.is_empty()) {
            let dir = PathBuf::from(dir);
            if !dir.join(".flotilla-members").exists() {
                eprintln!("testkit: starting {n} member(s) in {} ({MEMBERS_DIR_ENV}); they stay up for later runs", dir.display());
                Script::default().run(&["up", &n.to_string(), path_str(&dir)?], None)?;
            }
            return Members::reuse(&dir, n);
        }
        static SEQ: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "flotilla-members-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst)
        ));
        Members::up_with(Script::default(), dir, n)
    }

    /// Starts `n` member clusters in `dir` with the `scripts/members` at `script`, for a program
    /// run outside `cargo test` (`flotilla bench` finds the script in the checkout it runs from).
    /// The script's messages are kept out of our stderr and given in the error should it fail.
    pub fn up_in(script: &Path, dir: &Path, n: usize) -> Result<Members> {
        let script = Script {
            path: script.to_path_buf(),
            quiet: true,
        };
        Members::up_with(script, dir.to_path_buf(), n)
    }

    /// `scripts/members up n DIR`, the set ended when the value is dropped (and by the script's
    /// reaper should this process die without dropping it).
    fn up_with(script: Script, dir: PathBuf, n: usize) -> Result<Members> {
        let owner = std::process::id().to_string();
        let started = script.run(&["up", &n.to_string(), path_str(&dir)?], Some(&owner));
        // Whatever happened, this value now owns DIR: dropping it ends what may have started.
        let mut set = Members {
            dir,
            members: Vec::new(),
            owned: true,
            script,
        };
        started?;
        set.members = read_members(&set.dir)?;
        if set.members.len() != n {
            bail!(
                "scripts/members up {n} left {} members in {}",
                set.members.len(),
                set.dir.display()
            );
        }
        Ok(set)
    }

    /// The set running in `dir` (made by `scripts/members up`), which this value will not stop.
    pub fn reuse(dir: &Path, n: usize) -> Result<Members> {
        let members = read_members(dir)?;
        let script = Script::default();
        let status = script.run(&["status", path_str(dir)?], None)?;
        let running = status
            .lines()
            .filter(|l| l.starts_with("member-") && l.ends_with("running"))
            .count();
        if running < n {
            bail!(
                "{} has {running} running member(s), the test needs {n}: start a set with \
                 `scripts/members down {0}; scripts/members up {n} {0}` or unset {MEMBERS_DIR_ENV}",
                dir.display()
            );
        }
        Ok(Members {
            dir: dir.to_path_buf(),
            members,
            owned: false,
            script,
        })
    }

    /// One set of `n` members for the whole test binary, ended when the process exits. Tests using
    /// it must not stop members or depend on objects other tests leave behind (use namespaces).
    pub fn shared(n: usize) -> Result<&'static Members> {
        static SHARED: OnceLock<std::result::Result<Members, String>> = OnceLock::new();
        let set = SHARED.get_or_init(|| Members::up(n).map_err(|e| format!("{e:#}")));
        match set {
            Ok(set) if set.members.len() >= n => Ok(set),
            Ok(set) => bail!(
                "the shared member set has {} members, a test asked for {n}",
                set.members.len()
            ),
            Err(e) => bail!("starting the shared member set failed: {e}"),
        }
    }

    /// The directory of the set (`DIR` of `scripts/members up N DIR`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The members, `member-1` first.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The member called `name` (`member-K`).
    pub fn member(&self, name: &str) -> Result<&Member> {
        self.members
            .iter()
            .find(|m| m.name == name)
            .with_context(|| format!("no member {name} in {}", self.dir.display()))
    }

    /// A kube-rs client of member `name` as cluster-admin.
    pub async fn client(&self, name: &str) -> Result<kube::Client> {
        client_for(&self.member(name)?.kubeconfig).await
    }

    /// Clients of every member, in order.
    pub async fn clients(&self) -> Result<Vec<kube::Client>> {
        let mut clients = Vec::with_capacity(self.members.len());
        for m in &self.members {
            clients.push(client_for(&m.kubeconfig).await?);
        }
        Ok(clients)
    }

    /// Stops every process of member `name`, keeping its data: a cluster outage.
    pub fn stop(&self, name: &str) -> Result<()> {
        self.member(name)?;
        self.script
            .run(&["stop", name, path_str(&self.dir)?], None)
            .map(drop)
    }

    /// Starts a stopped member again with its data; returns once its `/readyz` answers.
    pub fn start(&self, name: &str) -> Result<()> {
        self.member(name)?;
        self.script
            .run(&["start", name, path_str(&self.dir)?], None)
            .map(drop)
    }

    /// Path of the `helm` binary that `scripts/members build` puts next to the cluster binaries.
    pub fn helm() -> Result<PathBuf> {
        Ok(bin_dir()?.join("helm"))
    }
}

impl Drop for Members {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        let Ok(dir) = path_str(&self.dir) else { return };
        if let Err(e) = self.script.run(&["down", dir], None) {
            eprintln!(
                "warning: could not take the members down ({e:#}): run `{} down {dir}`",
                self.script.path.display()
            );
        }
    }
}

/// The directory with kube-apiserver, …, kwok and helm; builds them first if needed.
pub fn bin_dir() -> Result<PathBuf> {
    static BUILT: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let script = Script::default();
            script
                .run(&["build"], None)
                .and_then(|_| script.run(&["path"], None))
                .map(|p| PathBuf::from(p.trim()))
                .map_err(|e| format!("{e:#}"))
        })
        .clone()
        .map_err(anyhow::Error::msg)
}

/// A kube-rs client of the server of a kubeconfig file (its current context). The errors use
/// the words of `flotilla`'s own commands, as `flotilla bench` reports them to users.
pub async fn client_for(kubeconfig: &Path) -> Result<kube::Client> {
    let kc = Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("cannot read the kubeconfig {}", kubeconfig.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .with_context(|| format!("the kubeconfig {} is not usable", kubeconfig.display()))?;
    kube::Client::try_from(config)
        .with_context(|| format!("cannot build a client from {}", kubeconfig.display()))
}

/// Path of `scripts/members`.
pub fn script() -> PathBuf {
    match std::env::var_os(MEMBERS_SCRIPT_ENV) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/members"),
    }
}

/// How `scripts/members` is run: which file, and where its messages go.
#[derive(Debug)]
struct Script {
    path: PathBuf,
    /// Keep its messages out of our stderr (they are given in the error should it fail).
    quiet: bool,
}

impl Default for Script {
    /// [`script()`], its messages on our stderr (where `cargo test` shows them).
    fn default() -> Script {
        Script {
            path: script(),
            quiet: false,
        }
    }
}

impl Script {
    /// Runs `scripts/members ARGS…` and returns its standard output.
    fn run(&self, args: &[&str], owner_pid: Option<&str>) -> Result<String> {
        let mut cmd = Command::new(&self.path);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if self.quiet {
                Stdio::piped()
            } else {
                Stdio::inherit()
            });
        cmd.env_remove("MEMBERS_OWNER_PID");
        if let Some(pid) = owner_pid {
            cmd.env("MEMBERS_OWNER_PID", pid);
        }
        let out = cmd.output().with_context(|| {
            format!(
                "running {} (set {MEMBERS_SCRIPT_ENV} if it lives elsewhere)",
                self.path.display()
            )
        })?;
        if !out.status.success() {
            let messages = if self.quiet {
                format!(":\n{}", String::from_utf8_lossy(&out.stderr).trim())
            } else {
                "; its messages are above".to_owned()
            };
            bail!(
                "`scripts/members {}` failed ({}){messages}",
                args.join(" "),
                out.status
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

fn path_str(p: &Path) -> Result<&str> {
    p.to_str()
        .with_context(|| format!("{} is not UTF-8", p.display()))
}

/// Reads `DIR/member-K/env` for K = 1, 2, … until one is missing.
fn read_members(dir: &Path) -> Result<Vec<Member>> {
    let mut members = Vec::new();
    for k in 1.. {
        let mdir = dir.join(format!("member-{k}"));
        let env_path = mdir.join("env");
        if !env_path.exists() {
            break;
        }
        let text = std::fs::read_to_string(&env_path)
            .with_context(|| format!("reading {}", env_path.display()))?;
        let env = parse_env(&text);
        let get = |key: &str| {
            env.get(key)
                .cloned()
                .with_context(|| format!("{} has no {key}", env_path.display()))
        };
        let port: u16 = get("PORT")?
            .parse()
            .with_context(|| format!("PORT in {}", env_path.display()))?;
        members.push(Member {
            name: get("NAME")?,
            server: get("SERVER")?,
            port,
            region: get("REGION")?,
            zone: get("ZONE")?,
            kubeconfig: mdir.join("kubeconfig"),
        });
    }
    if members.is_empty() {
        bail!(
            "{} has no member-1/env: is it a set made by `scripts/members up`?",
            dir.display()
        );
    }
    Ok(members)
}

fn parse_env(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

#[cfg(test)]
mod tests;
