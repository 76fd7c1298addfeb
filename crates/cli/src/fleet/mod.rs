//! The commands that manage the fleet through the hub: `token`, `cluster`, `join`, and the pull
//! `agent` itself. Each talks to the hub with `--kubeconfig` or `KUBECONFIG` like kubectl does.

pub mod agent;
mod client;
pub mod cluster;
pub mod join;
pub mod token;

pub use client::{hub_client, parse_duration};

/// Writes `bytes` to `path` with mode 0600 (credentials), replacing what was there.
pub fn write_private(path: &std::path::Path, bytes: &[u8]) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut f = options
        .open(path)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.write_all(bytes)
        .with_context(|| format!("cannot write {}", path.display()))
}
