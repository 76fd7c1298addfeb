//! The hub's DNS options: `--dns-zone` (the controllers publish names and judge endpoints) and
//! `--dns-listen` (the hub also answers for the zone, from the same parts `flotilla dns` runs,
//! and for the multi-cluster services zone of `--clusterset-zone` beside it).

use std::net::SocketAddr;
use std::path::Path;

use anyhow::{bail, Context, Result};
use flotilla_dns::geo::GeoTable;
use flotilla_dns::server::Server;
use flotilla_dns::snapshot::SnapshotHandle;

use super::ServeArgs;
use crate::dns::clusterset::{self, Clusterset};

/// What the hub serves in DNS, checked before anything starts.
pub(super) struct Plan {
    listen: Option<Listen>,
}

struct Listen {
    addr: SocketAddr,
    zone: String,
    geo: GeoTable,
    clusterset: Option<Clusterset>,
}

/// The bound server and what keeps its answers current.
pub(super) struct Bound {
    server: Server,
    zone: String,
    geo: GeoTable,
    handle: SnapshotHandle,
    clusterset: Option<Clusterset>,
}

impl Plan {
    /// Checks the DNS flags together, and reads the geo file.
    pub(super) fn from_args(args: &ServeArgs) -> Result<Plan> {
        let listen = match (args.dns_listen, &args.controllers.dns_zone) {
            (Some(_), None) => {
                bail!("--dns-listen needs --dns-zone: name the zone to answer for, e.g. --dns-zone fleet.example.com")
            }
            (None, _) if args.dns_geo_file.is_some() => {
                bail!("--dns-geo-file is used only when the hub answers DNS: add --dns-listen and --dns-zone")
            }
            (Some(addr), Some(zone)) => Some(Listen {
                addr,
                zone: zone.clone(),
                geo: crate::dns::read_geo(args.dns_geo_file.as_deref())?,
                clusterset: Clusterset::new(&args.clusterset_zone, zone)?,
            }),
            (None, _) => None,
        };
        Ok(Plan { listen })
    }

    /// Binds the DNS sockets (nothing without --dns-listen).
    pub(super) async fn bind(self) -> Result<Option<Bound>> {
        let Some(Listen {
            addr,
            zone,
            geo,
            clusterset,
        }) = self.listen
        else {
            return Ok(None);
        };
        let handle = crate::dns::empty(&zone)?;
        let zones = clusterset::zones(&handle, clusterset.as_ref())?;
        let server = crate::dns::bind(addr, zones).context("--dns-listen")?;
        tracing::info!(address = %server.local_addr(), zone = %zone, "the hub answers DNS");
        Ok(Some(Bound {
            server,
            zone,
            geo,
            handle,
            clusterset,
        }))
    }
}

/// Answers DNS until the process stops, keeping the snapshot current from the hub's watches
/// (through its admin kubeconfig, as the controllers do). Without --dns-listen, never returns.
pub(super) async fn serve(bound: Option<Bound>, kubeconfig: &Path) -> Result<()> {
    let Some(Bound {
        server,
        zone,
        geo,
        handle,
        clusterset,
    }) = bound
    else {
        return std::future::pending().await;
    };
    // Nothing is answered before the hub's fleet is read: no NXDOMAIN for its names at a restart.
    let fed = clusterset::fed(&handle, clusterset.as_ref());
    let feeding = async {
        let hub = crate::fleet::hub_client(Some(kubeconfig))
            .await
            .context("the DNS server cannot reach the hub")?;
        tokio::try_join!(
            crate::dns::from_hub(hub.clone(), &zone, geo, handle),
            clusterset::follow(hub, clusterset),
        )
        .map(|_| ())
    };
    tokio::select! {
        r = async {
            fed.await;
            tracing::info!("the hub's DNS answers from its fleet");
            server.run().await
        } => r.context("the DNS server stopped"),
        r = feeding => r,
    }
}
