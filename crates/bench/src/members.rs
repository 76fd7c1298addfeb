//! Members the benchmark starts itself when it is given no `--members-dir`: a set made with
//! `scripts/members up 3` of the checkout it runs from (testkit's [`Members`]), taken down when
//! it is dropped (and by the set's own reaper should the benchmark die without dropping it).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use flotilla_testkit::Members;

use super::fleet::MEMBERS;
use super::progress::Progress;

/// Run `scripts/members up 3 DIR`; the set is taken down when the value is dropped.
pub async fn start(dir: &Path, progress: &Progress) -> Result<Members> {
    let script = members_script()?;
    let phase = progress.phase(
        &format!("starting {MEMBERS} members with scripts/members (about 15 s)"),
        1,
    );
    let dir = dir.to_path_buf();
    // The script blocks for the whole start.
    let members = tokio::task::spawn_blocking(move || Members::up_in(&script, &dir, MEMBERS))
        .await
        .context("starting the members")?
        .map_err(|e| anyhow!("{e:#}\nstart members yourself and pass --members-dir"))?;
    phase.done("members up");
    Ok(members)
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
