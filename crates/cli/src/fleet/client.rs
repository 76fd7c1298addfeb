//! Reaching the hub from the CLI, and the small parsers the commands share.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

/// The kubeconfig to use: `--kubeconfig`, else `KUBECONFIG`, else `~/.kube/config` (as kubectl).
pub async fn hub_config(kubeconfig: Option<&Path>) -> Result<(Config, Kubeconfig)> {
    let kc = match kubeconfig {
        Some(path) => Kubeconfig::read_from(path)
            .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?,
        None => Kubeconfig::read().context(
            "no kubeconfig: pass --kubeconfig (e.g. the hub's DATA_DIR/admin.kubeconfig) or set KUBECONFIG",
        )?,
    };
    let config = Config::from_custom_kubeconfig(kc.clone(), &KubeConfigOptions::default())
        .await
        .context("the kubeconfig is not usable")?;
    Ok((config, kc))
}

/// A client for the hub (see [`hub_config`]).
pub async fn hub_client(kubeconfig: Option<&Path>) -> Result<Client> {
    let (config, _) = hub_config(kubeconfig).await?;
    Client::try_from(config).context("cannot build a client for the hub")
}

/// `30s`, `5m`, `1h`, `2d` or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (n, unit) = s.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a duration: write e.g. 30s, 5m, 1h or 2d"))?;
    let secs = match unit {
        "" | "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86400,
        _ => {
            return Err(format!(
                "{s:?} is not a duration: write e.g. 30s, 5m, 1h or 2d"
            ))
        }
    };
    Ok(Duration::from_secs(secs))
}

/// Where a member is and how it is labelled: asked for by `flotilla agent` when it joins, set
/// by `flotilla join`.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Topology {
    /// Labels for the Cluster, for placement: k=v,k2=v2.
    #[arg(long)]
    pub labels: Option<String>,
    /// The member's region.
    #[arg(long)]
    pub region: Option<String>,
    /// The member's zone.
    #[arg(long)]
    pub zone: Option<String>,
    /// The member's cloud provider (or on-prem).
    #[arg(long)]
    pub provider: Option<String>,
    /// The networks (CIDRs, comma-separated) the member's own DNS queries come from: the fleet
    /// DNS answers them with this member's endpoint of a service first.
    #[arg(long, value_delimiter = ',', value_parser = parse_cidr)]
    pub networks: Vec<String>,
}

/// A CIDR such as `10.1.0.0/16` (kept as written, after checking it).
fn parse_cidr(s: &str) -> Result<String, String> {
    let (addr, bits) = s.split_once('/').ok_or_else(|| {
        format!("{s:?} is no CIDR: write an address and a prefix length, e.g. 10.1.0.0/16")
    })?;
    let ip: std::net::IpAddr = addr
        .parse()
        .map_err(|_| format!("{s:?} is no CIDR: {addr:?} is no IP address"))?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    match bits.parse::<u8>() {
        Ok(n) if n <= max => Ok(s.to_owned()),
        _ => Err(format!(
            "{s:?} is no CIDR: the prefix length must be 0-{max}"
        )),
    }
}

impl Topology {
    /// The labels, parsed.
    pub fn label_map(&self) -> Result<BTreeMap<String, String>> {
        parse_labels(self.labels.as_deref().unwrap_or_default())
    }
}

/// `k=v,k2=v2` into labels.
pub fn parse_labels(s: &str) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = pair.split_once('=') else {
            bail!("--labels takes key=value pairs separated by commas (got {pair:?})");
        };
        out.insert(k.trim().to_owned(), v.trim().to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
