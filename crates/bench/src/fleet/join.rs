//! How the fleet is brought up: the members' clients, the hub's first answer, and each member
//! joined — a bootstrap token and a `flotilla agent` process for Pull, `flotilla join` for Push.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use flotilla_testkit::members::client_for;
use kube::Client;

use super::MEMBERS;
use crate::procs::{self, Proc};
use crate::progress::Progress;

/// How long the hub gets to answer after it starts.
const HUB_TIMEOUT: Duration = Duration::from_secs(60);

pub fn member_kubeconfig(dir: &Path, k: usize) -> PathBuf {
    dir.join(format!("member-{k}")).join("kubeconfig")
}

pub async fn member_client(kubeconfig: &Path, k: usize) -> Result<Client> {
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
    let client = client_for(kubeconfig).await?;
    client.apiserver_version().await.with_context(|| {
        format!(
            "member-{k} does not answer: is the set running? (`scripts/members status {dir}`; \
             `scripts/members start member-{k} {dir}` starts a stopped member)"
        )
    })?;
    Ok(client)
}

/// Wait for the hub's admin kubeconfig, then for the hub to answer through it.
pub async fn wait_for_hub(hub: &mut Proc, admin: &Path) -> Result<Client> {
    let deadline = Instant::now() + HUB_TIMEOUT;
    let mut last = None;
    while Instant::now() < deadline {
        hub.check_alive()?;
        // The kubeconfig is written before the store opens, and may be seen half-written.
        if admin.exists() {
            match client_for(admin).await {
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
pub async fn start_agent(name: &str, member: &Path, admin: &Path, dir: &Path) -> Result<Proc> {
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
    procs::start(
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
pub async fn join_push(name: &str, admin: &Path, member: &Path, progress: &Progress) -> Result<()> {
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
    let exe = procs::flotilla_binary()?;
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
