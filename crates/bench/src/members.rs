//! Members the benchmark starts itself when it is given no `--members-dir`: a set made with
//! `scripts/members up 3` of the checkout it runs from, taken down when the guard is dropped
//! (and by the set's own reaper should the benchmark die without dropping it).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

use super::fleet::MEMBERS;
use super::progress::Progress;

/// Members the benchmark started with `scripts/members up`, taken down when dropped.
pub struct StartedMembers {
    script: PathBuf,
    /// The set's directory (`DIR/member-K/kubeconfig`).
    pub dir: PathBuf,
}

impl StartedMembers {
    /// Run `scripts/members up 3 DIR`.
    pub async fn up(dir: &Path, progress: &Progress) -> Result<StartedMembers> {
        let script = members_script()?;
        let phase = progress.phase(
            &format!("starting {MEMBERS} members with scripts/members (about 15 s)"),
            1,
        );
        // Should the benchmark die without dropping this guard, the set's reaper takes it down.
        let out = tokio::process::Command::new(&script)
            .arg("up")
            .arg(MEMBERS.to_string())
            .arg(dir)
            .env("MEMBERS_OWNER_PID", std::process::id().to_string())
            .output()
            .await
            .with_context(|| format!("cannot run {}", script.display()))?;
        // From here on the set exists (perhaps partly): the guard takes it down.
        let started = StartedMembers {
            script,
            dir: dir.to_path_buf(),
        };
        if !out.status.success() {
            bail!(
                "`scripts/members up {MEMBERS} {}` failed ({}):\n{}\nstart members yourself and \
                 pass --members-dir",
                dir.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        phase.done("members up");
        Ok(started)
    }
}

impl Drop for StartedMembers {
    fn drop(&mut self) {
        let ok = std::process::Command::new(&self.script)
            .arg("down")
            .arg(&self.dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!(
                "warning: could not take the members down: run `{} down {}`",
                self.script.display(),
                self.dir.display()
            );
        }
    }
}

/// `scripts/members` of the flotilla checkout the current directory is in.
fn members_script() -> Result<PathBuf> {
    let root = crate::report::repo_root();
    let script = root.map(|r| r.join("scripts/members"));
    match script {
        Some(s) if s.exists() => Ok(s),
        _ => bail!(
            "without --members-dir the benchmark starts members with scripts/members, which it \
             looks for in the git checkout of the current directory: run it from a flotilla \
             checkout, or start members yourself (`scripts/members up {MEMBERS} DIR`) and pass \
             --members-dir DIR"
        ),
    }
}
