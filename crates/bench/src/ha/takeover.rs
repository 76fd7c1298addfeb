//! Controller takeover: two `flotilla controllers` processes (identities `a` and `b`) against
//! replicas that run no controllers of their own share the 16 shard Leases
//! (`flotilla-shard-0..15` in `flotilla-system`, holderIdentity = the process identity); `a` is
//! killed with SIGKILL and the time until `b` holds all 16 is measured. Measured only when this
//! build has the `controllers` subcommand.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use super::super::client::Client;
use super::super::procs::{self, Proc};
use super::super::progress::Progress;

/// Shard Leases the controllers share.
pub const SHARDS: usize = 16;
/// Where they are.
const LEASES: &str = "/apis/coordination.k8s.io/v1/namespaces/flotilla-system/leases";
/// How long the two processes get to hold every shard between them.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(90);
/// How long the survivor gets to hold every shard after the kill.
const TAKEOVER_TIMEOUT: Duration = Duration::from_secs(90);

/// What the phase measured.
#[derive(Debug)]
pub struct Takeover {
    /// From starting both processes to every shard held by one of them.
    pub settled: Duration,
    /// Shards each held before the kill (`a`, `b`).
    pub split: (usize, usize),
    /// From the SIGKILL of `a` to `b` holding every shard.
    pub took: Duration,
}

/// Whether this binary has `flotilla controllers` (`controllers --help` succeeds).
pub fn available() -> Result<bool, String> {
    let bin = procs::flotilla_binary().map_err(|e| format!("{e:#}"))?;
    let out = std::process::Command::new(&bin)
        .args(["controllers", "--help"])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
    Ok(out.status.success())
}

/// Run the phase: the processes talk to the replica of `kubeconfig`, `client` reads the Leases,
/// their logs go to `logs`.
pub async fn run(
    client: &Client,
    kubeconfig: &Path,
    logs: &Path,
    progress: &Progress,
) -> Result<Takeover> {
    let phase = progress.phase(
        "controllers: two `flotilla controllers` processes claim the 16 shards",
        SHARDS as u64,
    );
    let started = Instant::now();
    let mut a = start(kubeconfig, "a", logs)?;
    let mut b = start(kubeconfig, "b", logs)?;
    let deadline = started + SETTLE_TIMEOUT;
    let split = loop {
        a.check_alive()?;
        b.check_alive()?;
        let holders = holders(client).await.unwrap_or_default();
        let count = |who: &str| holders.values().filter(|h| h.as_str() == who).count();
        let (na, nb) = (count("a"), count("b"));
        phase.bar().set_position((na + nb) as u64);
        if na + nb == SHARDS && na > 0 && nb > 0 {
            break (na, nb);
        }
        if Instant::now() > deadline {
            bail!(
                "the two controller processes did not share the {SHARDS} shards within {} s; \
                 holders: {holders:?} (logs in {})",
                SETTLE_TIMEOUT.as_secs(),
                logs.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let settled = started.elapsed();
    phase.done(&format!("a holds {}, b holds {}", split.0, split.1));

    let phase = progress.phase(
        "controllers: SIGKILL of a, b takes its shards over",
        SHARDS as u64,
    );
    let killed = Instant::now();
    tokio::task::block_in_place(|| a.kill()).context("killing controller process a")?;
    let deadline = killed + TAKEOVER_TIMEOUT;
    let took = loop {
        b.check_alive()?;
        let holders = holders(client).await.unwrap_or_default();
        let nb = holders.values().filter(|h| h.as_str() == "b").count();
        phase.bar().set_position(nb as u64);
        if nb == SHARDS {
            break killed.elapsed();
        }
        if Instant::now() > deadline {
            bail!(
                "b did not hold all {SHARDS} shards within {} s of the kill; holders: \
                 {holders:?} (logs in {})",
                TAKEOVER_TIMEOUT.as_secs(),
                logs.display()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    phase.done(&format!(
        "b holds all {SHARDS} after {:.1} s",
        took.as_secs_f64()
    ));
    tokio::task::block_in_place(|| b.stop()).context("stopping controller process b")?;
    Ok(Takeover {
        settled,
        split,
        took,
    })
}

/// `flotilla controllers --kubeconfig K --identity NAME`, logging into `logs`.
fn start(kubeconfig: &Path, identity: &str, logs: &Path) -> Result<Proc> {
    std::fs::create_dir_all(logs).with_context(|| format!("cannot create {}", logs.display()))?;
    let args: [&OsStr; 5] = [
        OsStr::new("controllers"),
        OsStr::new("--kubeconfig"),
        kubeconfig.as_os_str(),
        OsStr::new("--identity"),
        OsStr::new(identity),
    ];
    procs::start(
        &format!("controller process {identity}"),
        &args,
        &logs.join(format!("controllers-{identity}.log")),
    )
}

/// Shard Lease name → holderIdentity (empty when unheld).
async fn holders(client: &Client) -> Result<BTreeMap<String, String>> {
    let body = client.get(LEASES).await?;
    let list: Value = serde_json::from_slice(&body).context("decoding the Lease list")?;
    Ok(shard_holders(&list))
}

fn shard_holders(list: &Value) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for item in list["items"].as_array().into_iter().flatten() {
        let Some(name) = item["metadata"]["name"].as_str() else {
            continue;
        };
        if !name.starts_with("flotilla-shard-") {
            continue;
        }
        let holder = item["spec"]["holderIdentity"].as_str().unwrap_or_default();
        out.insert(name.to_string(), holder.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_shard_leases_count_and_unheld_ones_are_empty() {
        let list = serde_json::json!({"items": [
            {"metadata": {"name": "flotilla-shard-0"}, "spec": {"holderIdentity": "a"}},
            {"metadata": {"name": "flotilla-shard-1"}, "spec": {}},
            {"metadata": {"name": "flotilla-controller-a"}, "spec": {"holderIdentity": "a"}},
        ]});
        let h = shard_holders(&list);
        assert_eq!(h.len(), 2);
        assert_eq!(h["flotilla-shard-0"], "a");
        assert_eq!(h["flotilla-shard-1"], "");
    }
}
