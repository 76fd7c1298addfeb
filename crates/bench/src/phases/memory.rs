//! Resident memory of the server's processes, from `/proc/PID/status` (VmRSS). A server made of
//! several processes (kube-apiserver and etcd) is measured as their sum.

use anyhow::{Context, Result};

/// The summed resident memory of `pids`, in bytes.
pub fn resident(pids: &[u32]) -> Result<u64> {
    anyhow::ensure!(!pids.is_empty(), "no process id to read memory from");
    let mut total = 0;
    for pid in pids {
        let path = format!("/proc/{pid}/status");
        let status = std::fs::read_to_string(&path).with_context(|| {
            format!("cannot read {path}: is process {pid} running on this machine?")
        })?;
        total += vm_rss(&status).with_context(|| format!("{path} has no VmRSS line"))?;
    }
    Ok(total)
}

/// The `VmRSS:` line of a `/proc/PID/status` text, in bytes.
fn vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let mut words = line.split_whitespace().skip(1);
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => Some(n * 1024),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
