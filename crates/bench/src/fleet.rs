//! The fleet the member-cluster benchmarks (`bench work`, `bench propagation`) run on: three
//! member clusters (given, or started with `scripts/members`), a hub started by the benchmark
//! with `--auto-approve`, member-1 and member-2 joined in Pull mode (one `flotilla agent`
//! process each) and member-3 in Push mode (`flotilla join`).
//!
//! Everything started here is stopped when the [`Fleet`] is dropped — agents first, then the
//! hub, then members the benchmark started itself — also on error or Ctrl-C.

pub(crate) mod join;
mod plane;

pub use plane::{Kinds, Plane, FLOTILLA};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use flotilla_apis::cluster::v1alpha1::{Cluster, CONDITION_READY};
use flotilla_testkit::hub::Serve;
use flotilla_testkit::Members;
use kube::{Client, ResourceExt};

use super::members;
use super::procs::{self, Proc};
use super::progress::Progress;
use super::report::{self, Head};
use join::{join_push, member_client, member_kubeconfig, start_agent, wait_for_hub};

/// How many members the benchmark uses.
pub const MEMBERS: usize = 3;
/// How long the members get to turn `Ready=True` on the hub after joining.
const READY_TIMEOUT: Duration = Duration::from_secs(120);

/// How a member receives its Works.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Mode {
    /// An agent (the code of `flotilla agent`) dials out to the hub.
    Pull,
    /// A worker inside the hub dials in to the member.
    Push,
}

impl Mode {
    /// `pull` or `push` (also the `--mode` value of `flotilla sim`).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Pull => "pull",
            Mode::Push => "push",
        }
    }

    /// `Pull` or `Push`, as a Cluster's `spec.syncMode` says it.
    pub fn sync_mode(self) -> &'static str {
        match self {
            Mode::Pull => "Pull",
            Mode::Push => "Push",
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
    /// The control plane: the hub process, or Karmada's.
    pub hub: Plane,
    /// A client of the control plane's API with its admin credential.
    pub client: Client,
    /// Members started by the benchmark, taken down last.
    _started: Option<Members>,
    /// The hub's data, the agents' state and the logs (removed at the end).
    pub dir: tempfile::TempDir,
}

impl Fleet {
    /// Start the hub and join the members of `members_dir` (or of a set started here when
    /// `None`); returns once every Cluster is `Ready=True`. `bench` names the benchmark in the
    /// temporary directory's name.
    pub async fn start(
        bench: &str,
        members_dir: Option<&Path>,
        progress: &Progress,
    ) -> Result<Fleet> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("flotilla-bench-{bench}-"))
            .tempdir()
            .context("cannot create a temporary directory for the hub and the agents")?;
        let (members_dir, started) = match members_dir {
            Some(d) => (d.to_path_buf(), None),
            None => {
                let started = members::start(&dir.path().join("members"), progress).await?;
                (started.dir().to_path_buf(), Some(started))
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
        let serve = Serve::new(&procs::flotilla_binary()?, &hub_dir)
            .args(["--auto-approve"])
            .rust_log(&procs::log_filter())
            .log(&dir.path().join("hub.log"));
        let mut hub = serve.start()?;
        let admin = serve.kubeconfig();
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
            hub: Plane::Flotilla(hub),
            client,
            _started: started,
            dir,
        };
        fleet.wait_ready(progress).await?;
        Ok(fleet)
    }

    /// Start Karmada's control plane (scripts/karmada) and join the members of `members_dir`
    /// to it in Push mode; returns once every Cluster is `Ready=True`.
    pub async fn start_karmada(
        bench: &str,
        members_dir: &Path,
        progress: &Progress,
    ) -> Result<Fleet> {
        let dir = tempfile::Builder::new()
            .prefix(&format!("flotilla-bench-{bench}-karmada-"))
            .tempdir()
            .context("cannot create a temporary directory for Karmada")?;
        let mut members = Vec::new();
        for k in 1..=MEMBERS {
            let kubeconfig = member_kubeconfig(members_dir, k);
            members.push(Member {
                name: format!("member-{k}"),
                mode: Mode::Push,
                client: member_client(&kubeconfig, k).await?,
                agent: None,
            });
        }
        let phase = progress.phase(
            &format!(
                "starting Karmada (scripts/karmada up; builds it first if needed) and joining \
                 {MEMBERS} members in Push mode"
            ),
            1,
        );
        let (plane_dir, members_dir) = (dir.path().join("karmada"), members_dir.to_path_buf());
        let karmada = tokio::task::spawn_blocking(move || {
            crate::karmada::Karmada::start(&plane_dir, &members_dir, MEMBERS)
        })
        .await
        .context("starting Karmada")??;
        phase.done("Karmada up, members joined");
        let client = flotilla_testkit::members::client_for(&karmada.kubeconfig).await?;
        let mut fleet = Fleet {
            members,
            hub: Plane::Karmada(karmada),
            client,
            _started: None,
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

    /// Stop everything the benchmark started, off the async threads (stopping waits for each
    /// process to exit). With `keep_logs` the directory of the hub's and agents' logs is kept;
    /// its path is returned either way, for [`logs_kept`].
    pub async fn stop(mut self, keep_logs: bool) -> Result<PathBuf> {
        let logs = self.dir.path().to_path_buf();
        self.dir.disable_cleanup(keep_logs);
        tokio::task::spawn_blocking(move || drop(self))
            .await
            .context("stopping the agents and the hub")?;
        Ok(logs)
    }

    /// Stop everything, keep the logs, and return `e` saying where they are.
    pub async fn fail(self, e: anyhow::Error) -> anyhow::Error {
        match self.stop(true).await {
            Ok(logs) => e.context(logs_kept(&logs)),
            Err(stopping) => e.context(format!("{stopping:#}")),
        }
    }

    /// Which member is joined how, and where the members came from, for a report.
    pub fn describe(&self, given: bool) -> String {
        let each: Vec<String> = self
            .members
            .iter()
            .map(|m| match &m.agent {
                Some(a) => format!("{} {} (agent pid {})", m.name, m.mode.name(), a.pid()),
                None => format!("{} {} (worker in the hub)", m.name, m.mode.name()),
            })
            .collect();
        format!(
            "{}; real kube-apiservers with a shared etcd and KWOK nodes ({})",
            each.join(", "),
            if given {
                "given with --members-dir"
            } else {
                "started by the benchmark"
            }
        )
    }

    /// The end of every log, for an error message that needs the whole picture.
    pub fn log_tails(&self) -> String {
        let mut out = format!(
            "{} log (last lines):\n{}\n",
            self.hub.kinds().name,
            self.hub.log_tail(10)
        );
        for m in &self.members {
            if let Some(a) = &m.agent {
                out += &format!("{} agent log (last lines):\n{}\n", m.name, a.log_tail(10));
            }
        }
        out
    }

    /// The Clusters of the control plane.
    pub async fn clusters(&self) -> Result<Vec<Cluster>> {
        self.hub.clusters(&self.client).await
    }

    async fn wait_ready(&mut self, progress: &Progress) -> Result<()> {
        self.wait_clusters("Ready=True", ready, READY_TIMEOUT, progress)
            .await
    }

    /// Wait until the Cluster of every member passes `test` (described by `what`), for at
    /// most `timeout`.
    pub async fn wait_clusters(
        &mut self,
        what: &str,
        test: impl Fn(&Cluster) -> bool,
        timeout: Duration,
        progress: &Progress,
    ) -> Result<()> {
        let phase = progress.phase(
            &format!("waiting for the {MEMBERS} Clusters to be {what}"),
            MEMBERS as u64,
        );
        let deadline = Instant::now() + timeout;
        loop {
            self.check_alive()?;
            let clusters = self.clusters().await?;
            let passed: Vec<String> = clusters
                .iter()
                .filter(|c| test(c))
                .map(ResourceExt::name_any)
                .collect();
            phase.bar().set_position(passed.len() as u64);
            if self.members.iter().all(|m| passed.contains(&m.name)) {
                phase.done(&format!("all {what}"));
                return Ok(());
            }
            if Instant::now() > deadline {
                let seen: Vec<String> = clusters
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
                    "the members were not all {what} within {} s; the Clusters are: [{}]\n{}",
                    timeout.as_secs(),
                    seen.join("; "),
                    self.log_tails()
                );
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

/// Context for an error after which the logs in `logs` were kept.
pub fn logs_kept(logs: &Path) -> String {
    format!("the hub's and agents' logs are kept in {}", logs.display())
}

/// One run of a benchmark on the fleet: its name, which labels what it creates, and what the
/// report's head says about it, gathered as it starts.
pub struct Run {
    /// `bench-xxxxxxxx`.
    pub name: String,
    when: String,
    /// The checkout as the run starts (it may change while the run goes on).
    commit: String,
    /// The benchmark shares the machine with its members; the report says how busy it was.
    load_before: String,
}

impl Run {
    /// A run starting now.
    pub fn begin() -> Run {
        Run {
            name: format!("bench-{:08x}", rand::random::<u32>()),
            when: chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
            commit: report::commit(),
            load_before: report::load_average(),
        }
    }

    /// The report's head, once the run is over.
    pub fn head(self, quick: bool, members: String) -> Head {
        self.head_sharing(
            quick,
            members,
            "the agents, the members and the load generator",
        )
    }

    /// [`Run::head`] for a run whose hub shares the machine with `sharing` (not the agents and
    /// members of a usual run).
    pub fn head_sharing(self, quick: bool, members: String, sharing: &str) -> Head {
        Head {
            when: self.when,
            machine: report::machine(),
            commit: self.commit,
            run: format!(
                "{} scale, {} build of flotilla {}; the hub (SQLite), {sharing} share this \
                 machine; 1-minute load average {} before the run, {} after it",
                if quick { "quick" } else { "full" },
                report::build(),
                env!("CARGO_PKG_VERSION"),
                self.load_before,
                report::load_average()
            ),
            members,
        }
    }
}

/// Whether a Cluster is `Ready=True` on the hub.
pub fn ready(c: &Cluster) -> bool {
    c.status.as_ref().is_some_and(|s| {
        s.conditions
            .iter()
            .any(|c| c.type_ == CONDITION_READY && c.status == "True")
    })
}
