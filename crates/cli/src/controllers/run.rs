//! The controllers and push workers, as `serve` runs them beside the API server and
//! `flotilla controllers` runs them alone: ordinary clients of the hub (through a kubeconfig),
//! working the shards whose Leases this process holds.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use flotilla_agent::loops::Loops;
use flotilla_agent::{delivery, heartbeat, probe, push};
use flotilla_apis::names::OMIT_MANAGED_FIELDS_HEADER;
use flotilla_controllers::propagation::binding::Bindings;
use flotilla_controllers::propagation::{dependencies, detector, scheduling, works};
use flotilla_controllers::shards::{Leases, Shards};
use flotilla_controllers::{dns, health, joining, namespace_defaults, tokens};
use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};

use super::ControllerArgs;

/// The header naming the controller process on each of its requests to the hub.
pub const IDENTITY_HEADER: &str = "x-flotilla-controller";

/// What the controllers call themselves: the field manager of their writes that name none
/// (a push worker's Work status, a finalizer's merge patch) is the part before the `/`.
pub const USER_AGENT: &str = concat!("flotilla-controllers/", env!("CARGO_PKG_VERSION"));

/// Runs the controllers as `identity` until `stop` completes, then gives the shards back and
/// returns (or returns an error if the hub cannot be reached at all).
///
/// `in_process`: the API server of this very process (`serve`), which then serves the
/// controllers' requests without going through its listener ([`super::in_process`]).
pub async fn run(
    kubeconfig: &Path,
    in_process: Option<Arc<flotilla_api::Api>>,
    args: &ControllerArgs,
    identity: &str,
    stop: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let hub_config = HubConfig::read(kubeconfig, identity)?;
    let root_ca = hub_config.root_ca()?;
    // Lease renewals through a client of their own, made on the lease keeper's runtime: never
    // queued behind the controllers' watches and writes on a busy hub.
    let (hub, (leases, shards)) = match in_process {
        Some(api) => {
            let hub = super::in_process::client(api.clone(), &hub_config)?;
            let leases = Leases::start(|| super::in_process::client(api, &hub_config), identity);
            (hub, leases?)
        }
        None => {
            let config = client_config(&hub_config).await?;
            let hub = flotilla_controllers::fence::client(config.clone())
                .context("cannot build a client for the hub")?;
            (
                hub,
                Leases::start(|| flotilla_controllers::fence::client(config), identity)?,
            )
        }
    };
    // On the heap: the controllers' futures together are too large for a thread's stack.
    tokio::select! {
        _ = Box::pin(controllers(hub, args, root_ca, shards, identity)) => {}
        _ = stop => {}
    }
    leases.release().await;
    Ok(())
}

/// How the controllers reach the hub: its kubeconfig, read once, and the value of the
/// identity header their requests carry.
pub(super) struct HubConfig {
    /// Where the kubeconfig was read from (for messages).
    pub path: std::path::PathBuf,
    /// The kubeconfig.
    pub file: kube::config::Kubeconfig,
    /// `--identity`, as the header's value.
    pub identity: http::HeaderValue,
}

impl HubConfig {
    /// Read `kubeconfig`; `identity` names this process to the hub.
    pub fn read(kubeconfig: &Path, identity: &str) -> Result<HubConfig> {
        let file = kube::config::Kubeconfig::read_from(kubeconfig)
            .with_context(|| format!("cannot read the kubeconfig {}", kubeconfig.display()))?;
        let identity = http::HeaderValue::from_str(identity)
            .with_context(|| format!("--identity {identity:?} is not a valid header value"))?;
        Ok(HubConfig {
            path: kubeconfig.to_path_buf(),
            file,
            identity,
        })
    }

    /// The PEM of the CA that clients of the hub trust, as the kubeconfig holds it: what
    /// every namespace's `kube-root-ca.crt` publishes.
    fn root_ca(&self) -> Result<String> {
        use base64::Engine as _;
        let data = self
            .file
            .clusters
            .iter()
            .find_map(|c| c.cluster.as_ref()?.certificate_authority_data.clone())
            .with_context(|| format!("{} names no CA", self.path.display()))?;
        let pem = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .context("decoding the hub's CA in the kubeconfig")?;
        String::from_utf8(pem).context("the hub's CA is no PEM text")
    }
}

/// The configuration of a hub client whose requests name this process ([`IDENTITY_HEADER`]);
/// [`flotilla_controllers::fence::client`] makes it carry the fence of the shard being worked.
async fn client_config(hub: &HubConfig) -> Result<kube::Config> {
    let options = kube::config::KubeConfigOptions::default();
    let mut config = kube::Config::from_custom_kubeconfig(hub.file.clone(), &options)
        .await
        .with_context(|| format!("the kubeconfig {} is not usable", hub.path.display()))?;
    let name = IDENTITY_HEADER
        .parse()
        .context("the identity header's name")?;
    config.headers.push((name, hub.identity.clone()));
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(USER_AGENT),
    ));
    // The controllers keep no object's managedFields: the hub need not send them.
    config.headers.push((
        http::HeaderName::from_static(OMIT_MANAGED_FIELDS_HEADER),
        http::HeaderValue::from_static("true"),
    ));
    Ok(config)
}

async fn controllers(
    hub: kube::Client,
    args: &ControllerArgs,
    root_ca: String,
    shards: Shards,
    identity: &str,
) {
    let beat = heartbeat::Options {
        interval: args.heartbeat_interval,
        holder: format!("{identity}/push"),
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
    // With a zone the controllers judge the federated Services' endpoints by their voters'
    // reports and publish their names; the answers come from `serve --dns-listen` or
    // `flotilla dns`.
    let dns_zone = args.dns_zone.clone();
    let voting = probe::Options {
        source: args.probe_source,
        ..probe::Options::default()
    };
    let dns = async {
        let Some(zone) = dns_zone else {
            return;
        };
        shards
            .while_owned(dns::controller::MANAGER, || async {
                let options = dns::controller::ControllerOptions { zone: zone.clone() };
                if let Err(e) = dns::controller::run(hub.clone(), options).await {
                    tracing::error!("the DNS controller stopped: {e}");
                }
            })
            .await
    };
    let approve = args.auto_approve;
    let everywhere = args.default_clusterset_binding;
    let push_share: Arc<dyn push::Share> = Arc::new(PushShare(shards.clone()));
    // One watch and one store of the bindings for the four propagation controllers.
    let bindings = Bindings::new(hub.clone());
    // The singletons run where their shard is owned. Each controller is polled when it is
    // woken, not whenever any of them is: in one `join!` every wake-up (a Lease renewal seen
    // by health, 100 a second at 1,000 members) polled every controller's idle watches.
    let mut running: FuturesUnordered<BoxFuture<'_, ()>> = [
        shards
            .while_owned("joining", || joining::run(hub.clone(), approve))
            .boxed(),
        shards
            .while_owned("tokens", || tokens::run(hub.clone()))
            .boxed(),
        shards
            .while_owned("clustersets", || {
                flotilla_controllers::registry::keep_default_clusterset(hub.clone(), everywhere)
            })
            .boxed(),
        shards
            .while_owned("mcs", || {
                flotilla_controllers::mcs::run(hub.clone(), bindings.clone())
            })
            .boxed(),
        shards
            .while_owned("namespace-defaults", || {
                namespace_defaults::run(hub.clone(), root_ca.clone())
            })
            .boxed(),
        detector::run(hub.clone(), shards.clone(), bindings.clone()).boxed(),
        scheduling::run(hub.clone(), placement, shards.clone(), bindings.clone()).boxed(),
        works::run(hub.clone(), binding, shards.clone(), bindings.clone()).boxed(),
        dependencies::run(hub.clone(), shards.clone(), bindings.clone()).boxed(),
        health::run(hub.clone(), grace, shards.clone()).boxed(),
        dns.boxed(),
        push::supervise(
            hub.clone(),
            Loops {
                beat,
                probe: voting,
                delivery: delivery::Options::default(),
                ..Loops::default()
            },
            push_share,
        )
        .boxed(),
    ]
    .into_iter()
    .collect();
    while running.next().await.is_some() {}
}

/// Push workers for the clusters whose shard (by cluster name) this process owns, fenced by
/// that shard's Lease.
struct PushShare(Shards);

impl push::Share for PushShare {
    fn serves(&self, cluster: &str) -> bool {
        self.0.owns_key(cluster)
    }

    fn changed(&self) -> BoxStream<'static, ()> {
        self.0.changed().boxed()
    }

    fn run(&self, cluster: &str, work: BoxFuture<'static, ()>) -> BoxFuture<'static, ()> {
        let (shards, cluster) = (self.0.clone(), cluster.to_owned());
        async move {
            shards.work(&cluster, work).await;
        }
        .boxed()
    }
}
