//! The fleet under test: three member clusters (given, or started with `scripts/members`), a hub
//! started by the benchmark with `--auto-approve`, member-1 and member-2 joined in Pull mode
//! (one `flotilla agent` process each) and member-3 in Push mode (`flotilla join`).
//!
//! Everything started here is stopped when the [`Fleet`] is dropped — agents first, then the
//! hub, then members the benchmark started itself — also on error or Ctrl-C.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use flotilla_apis::cluster::v1alpha1::{Cluster, CONDITION_READY};
use kube::{Api, Client, ResourceExt};

use super::members::StartedMembers;
use super::procs::Proc;
use crate::bench::progress::Progress;

/// How many members the benchmark uses.
pub const MEMBERS: usize = 3;
/// How long the hub gets to answer after it starts.
const HUB_TIMEOUT: Duration = Duration::from_secs(60);
/// How long the members get to turn `Ready=True` on the hub after joining.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// How a member receives its Works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A `flotilla agent` process dials out to the hub.
    Pull,
    /// A worker inside the hub dials in to the member.
    Push,
}

impl Mode {
    /// `pull` or `push`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Pull => "pull",
            Mode::Push => "push",
        }
    }
}

/// One member cluster as the benchmark uses it.
pub struct Member {
    /// Its name on the hub: `member-K`.
    pub name: String,
    /// How it is joined.
    pub mode: Mode,
    /// A client of the member itself (to see what reached it).
    pub client: Client,
    /// Its pull agent, if it has one.
    pub agent: Option<Proc>,
}

/// The hub, its members and everything the benchmark started for them.
pub struct Fleet {
    /// The members, member-1 first. Declared first: their agents stop before the hub.
    pub members: Vec<Member>,
    /// The hub process.
    pub hub: Proc,
    /// A client of the hub with its admin credential.
    pub client: Client,
    /// Members started by the benchmark, taken down last.
    _started: Option<StartedMembers>,
    /// The hub's data, the agents' state and the logs (removed at the end).
    pub dir: tempfile::TempDir,
}

impl Fleet {
    /// Start the hub and join the members of `members_dir` (or of a set started here when
    /// `None`); returns once every Cluster is `Ready=True`.
    pub async fn start(members_dir: Option<&Path>, progress: &Progress) -> Result<Fleet> {
        let dir = tempfile::Builder::new()
            .prefix("flotilla-bench-work-")
            .tempdir()
            .context("cannot create a temporary directory for the hub and the agents")?;
        let (members_dir, started) = match members_dir {
            Some(d) => (d.to_path_buf(), None),
            None => {
                let started = StartedMembers::up(&dir.path().join("members"), progress).await?;
                (started.dir.clone(), Some(started))
            }
        };
        let mut member_clients = Vec::new();
        for k in 1..=MEMBERS {
            let kubeconfig = member_kubeconfig(&members_dir, k);
            member_clients.push((
                format!("member-{k}"),
                kubeconfig.clone(),
                member_client(&kubeconfig, k).await?,
            ));
        }

        progress.note("starting `flotilla serve --auto-approve` (SQLite)");
        let hub_dir = dir.path().join("hub");
        let mut hub = Proc::start(
            "hub",
            &[
                OsStr::new("serve"),
                OsStr::new("--data-dir"),
                hub_dir.as_os_str(),
                OsStr::new("--listen"),
                OsStr::new("127.0.0.1:0"),
                OsStr::new("--auto-approve"),
            ],
            &dir.path().join("hub.log"),
        )?;
        let admin = hub_dir.join("admin.kubeconfig");
        let client = wait_for_hub(&mut hub, &admin).await?;
        progress.note(&format!("hub ready, pid {}", hub.pid()));

        let mut members = Vec::new();
        for (k, (name, kubeconfig, member)) in member_clients.into_iter().enumerate() {
            // member-1 and member-2 pull, member-3 is pushed to: both paths are measured.
            let mode = if k + 1 < MEMBERS {
                Mode::Pull
            } else {
                Mode::Push
            };
            let agent = match mode {
                Mode::Pull => Some(start_agent(&name, &kubeconfig, &admin, dir.path()).await?),
                Mode::Push => {
                    join_push(&name, &admin, &kubeconfig, progress).await?;
                    None
                }
            };
            if let Some(a) = &agent {
                progress.note(&format!("{name}: pull agent started, pid {}", a.pid()));
            } else {
                progress.note(&format!("{name}: joined in Push mode"));
            }
            members.push(Member {
                name,
                mode,
                client: member,
                agent,
            });
        }
        let mut fleet = Fleet {
            members,
            hub,
            client,
            _started: started,
            dir,
        };
        fleet.wait_ready(progress).await?;
        Ok(fleet)
    }

    /// An error if the hub or an agent has exited, quoting its log.
    pub fn check_alive(&mut self) -> Result<()> {
        self.hub.check_alive()?;
        for m in &mut self.members {
            if let Some(a) = &mut m.agent {
                a.check_alive()?;
            }
        }
        Ok(())
    }

    /// The end of every log, for an error message that needs the whole picture.
    pub fn log_tails(&self) -> String {
        let mut out = format!("hub log (last lines):\n{}\n", self.hub.log_tail(10));
        for m in &self.members {
            if let Some(a) = &m.agent {
                out += &format!("{} agent log (last lines):\n{}\n", m.name, a.log_tail(10));
            }
        }
        out
    }

    async fn wait_ready(&mut self, progress: &Progress) -> Result<()> {
        let phase = progress.phase(
            "waiting for the 3 Clusters to be Ready=True",
            MEMBERS as u64,
        );
        let api: Api<Cluster> = Api::all(self.client.clone());
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            self.check_alive()?;
            let clusters = api
                .list(&Default::default())
                .await
                .context("listing Clusters on the hub")?;
            let ready: Vec<String> = clusters
                .items
                .iter()
                .filter(|c| ready(c))
                .map(ResourceExt::name_any)
                .collect();
            phase.bar().set_position(ready.len() as u64);
            if self.members.iter().all(|m| ready.contains(&m.name)) {
                phase.done("all Ready");
                return Ok(());
            }
            if Instant::now() > deadline {
                let seen: Vec<String> = clusters
                    .items
                    .iter()
                    .map(|c| {
                        let conditions = c
                            .status
                            .as_ref()
                            .map(|s| {
                                s.conditions
                                    .iter()
                                    .map(|c| format!("{}={} ({})", c.type_, c.status, c.reason))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            })
                            .unwrap_or_default();
                        format!("{}: {conditions}", c.name_any())
                    })
                    .collect();
                bail!(
                    "the members were not all Ready=True within {} s; the Clusters are: [{}]\n{}",
                    READY_TIMEOUT.as_secs(),
                    seen.join("; "),
                    self.log_tails()
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

fn ready(c: &Cluster) -> bool {
    c.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == CONDITION_READY && c.status == "True")
    })
}

fn member_kubeconfig(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("member-{k}")).join("kubeconfig")
}

async fn member_client(kubeconfig: &Path, k: usize) -> Result<Client> {
    let dir = kubeconfig
        .parent()
        .and_then(Path::parent)
        .unwrap_or(Path::new("."))
        .display()
        .to_string();
    if !kubeconfig.exists() {
        bail!(
            "{} is missing: --members-dir takes a set of at least {MEMBERS} members started with \
             `scripts/members up {MEMBERS} {dir}`",
            kubeconfig.display()
        );
    }
    let client = crate::fleet::hub_client(Some(kubeconfig)).await?;
    client.apiserver_version().await.with_context(|| {
        format!(
            "member-{k} does not answer: is the set running? (`scripts/members status {dir}`; \
             `scripts/members start member-{k} {dir}` starts a stopped member)"
        )
    })?;
    Ok(client)
}

/// Wait for the hub's admin kubeconfig, then for the hub to answer through it.
async fn wait_for_hub(hub: &mut Proc, admin: &Path) -> Result<Client> {
    let deadline = Instant::now() + HUB_TIMEOUT;
    let mut last = None;
    while Instant::now() < deadline {
        hub.check_alive()?;
        // The kubeconfig is written before the store opens, and may be seen half-written.
        if admin.exists() {
            match crate::fleet::hub_client(Some(admin)).await {
                Ok(client) => match client.apiserver_version().await {
                    Ok(_) => return Ok(client),
                    Err(e) => last = Some(e.to_string()),
                },
                Err(e) => last = Some(format!("{e:#}")),
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!(
        "the hub did not answer within {} s ({}); the end of its log:\n{}",
        HUB_TIMEOUT.as_secs(),
        last.unwrap_or_else(|| format!("no {}", admin.display())),
        hub.log_tail(20)
    )
}

/// A bootstrap token for `name`, then its agent.
async fn start_agent(name: &str, member: &Path, admin: &Path, dir: &Path) -> Result<Proc> {
    let boot = dir.join(format!("{name}.bootstrap.kubeconfig"));
    flotilla(&[
        OsStr::new("token"),
        OsStr::new("create"),
        OsStr::new("--kubeconfig"),
        admin.as_os_str(),
        OsStr::new("--cluster"),
        OsStr::new(name),
        OsStr::new("-o"),
        boot.as_os_str(),
    ])
    .await
    .with_context(|| format!("creating a bootstrap token for {name}"))?;
    let state = dir.join(format!("agent-{name}"));
    Proc::start(
        &format!("{name} agent"),
        &[
            OsStr::new("agent"),
            OsStr::new("--cluster"),
            OsStr::new(name),
            OsStr::new("--bootstrap-kubeconfig"),
            boot.as_os_str(),
            OsStr::new("--kubeconfig"),
            member.as_os_str(),
            OsStr::new("--state-dir"),
            state.as_os_str(),
        ],
        &dir.join(format!("agent-{name}.log")),
    )
}

/// `flotilla join NAME` (push), tried up to 3 times: it is idempotent, and with the hub's
/// `--auto-approve` its approval races the joining controller's, which the hub has been seen to
/// answer with 409 Conflict. A retry is reported, so the race stays visible.
async fn join_push(name: &str, admin: &Path, member: &Path, progress: &Progress) -> Result<()> {
    const ATTEMPTS: usize = 3;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let joined = flotilla(&[
            OsStr::new("join"),
            OsStr::new(name),
            OsStr::new("--kubeconfig"),
            admin.as_os_str(),
            OsStr::new("--member-kubeconfig"),
            member.as_os_str(),
        ])
        .await;
        match joined {
            Ok(()) => return Ok(()),
            Err(e) if attempt < ATTEMPTS => {
                progress.note(&format!(
                    "warning: joining {name} failed, trying again: {}",
                    format!("{e:#}").lines().next().unwrap_or_default()
                ));
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e.context(format!("joining {name} in Push mode"))),
        }
    }
}

/// Run a short `flotilla …` command to its end; an error quotes its output.
async fn flotilla(args: &[&OsStr]) -> Result<()> {
    let exe = std::env::current_exe().context("cannot locate the flotilla binary")?;
    let out = tokio::process::Command::new(exe)
        .args(args)
        .env("RUST_LOG", "warn")
        .env_remove("KUBECONFIG")
        // Its error message is quoted; a backtrace would bury it.
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .kill_on_drop(true)
        .output()
        .await
        .context("cannot run flotilla")?;
    if !out.status.success() {
        bail!(
            "`flotilla {}` failed ({}): {}{}",
            args.iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            String::from_utf8_lossy(&out.stdout).trim()
        );
    }
    Ok(())
}
