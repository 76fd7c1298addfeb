//! The controllers and push workers `serve` runs beside the API server. They are ordinary
//! clients of the hub (through its admin kubeconfig), as they would be in another process.

use std::path::Path;

use anyhow::{Context, Result};
use flotilla_agent::{delivery, heartbeat, probe, push};
use flotilla_controllers::propagation::{dependencies, detector, scheduling, works};
use flotilla_controllers::{dns, health, joining, namespace_defaults, tokens};

use super::ServeArgs;

/// Runs the controllers until dropped (returns only if the hub cannot be reached at all).
pub async fn run(kubeconfig: &Path, args: &ServeArgs) -> Result<()> {
    let hub = crate::fleet::hub_client(Some(kubeconfig))
        .await
        .context("the controllers cannot reach the hub")?;
    let root_ca = root_ca(kubeconfig)?;
    let beat = heartbeat::Options {
        interval: args.heartbeat_interval,
        holder: "flotilla-hub/push".into(),
        ..heartbeat::Options::default()
    };
    let grace = health::Options {
        grace: args.cluster_grace_period,
        ..health::Options::default()
    };
    let placement = scheduling::Options {
        failover_toleration: args.failover_toleration,
        failback_after: args.failback_after.0,
    };
    let binding = works::Options {
        eviction_timeout: args.graceful_eviction_timeout,
        dns_zone: args.dns_zone.clone(),
    };
    // With a zone the hub judges the federated Services' endpoints by its voters' reports and
    // publishes their names; the answers themselves come from `--dns-listen` or `flotilla dns`.
    let dns_zone = args.dns_zone.clone();
    let dns_hub = hub.clone();
    let voting = probe::Options {
        source: args.probe_source,
        ..probe::Options::default()
    };
    let dns = async move {
        let Some(zone) = dns_zone else {
            return;
        };
        let options = dns::controller::ControllerOptions { zone };
        if let Err(e) = dns::controller::run(dns_hub, options).await {
            tracing::error!("the DNS controller stopped: {e}");
        }
    };
    tokio::join!(
        joining::run(hub.clone(), args.auto_approve),
        detector::run(hub.clone()),
        scheduling::run(hub.clone(), placement),
        works::run(hub.clone(), binding),
        dependencies::run(hub.clone()),
        health::run(hub.clone(), grace),
        tokens::run(hub.clone()),
        flotilla_controllers::mcs::run(hub.clone()),
        namespace_defaults::run(hub.clone(), root_ca),
        dns,
        push::supervise(hub, delivery::Options::default(), beat, voting),
    );
    Ok(())
}

/// The PEM of the CA that clients of the hub trust, as the admin kubeconfig holds it: what every
/// namespace's `kube-root-ca.crt` publishes.
fn root_ca(kubeconfig: &Path) -> Result<String> {
    use base64::Engine as _;
    let config = kube::config::Kubeconfig::read_from(kubeconfig)
        .with_context(|| format!("reading {}", kubeconfig.display()))?;
    let data = config
        .clusters
        .iter()
        .find_map(|c| c.cluster.as_ref()?.certificate_authority_data.clone())
        .with_context(|| format!("{} names no CA", kubeconfig.display()))?;
    let pem = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .context("decoding the hub's CA in the admin kubeconfig")?;
    String::from_utf8(pem).context("the hub's CA is no PEM text")
}
