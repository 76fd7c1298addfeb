//! `flotilla dns`: the fleet's authoritative DNS server as its own process, an ordinary client
//! of the hub (so it can run near users, several times), answering from a snapshot it keeps
//! current from hub watches. `flotilla serve --dns-listen` runs the same parts inside the hub.
//!
//! A hidden `--fleet-file` serves a fleet described in a JSON file instead of a hub, reloaded
//! when the file changes: the DNS benchmark drives the server that way.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context, Result};
use clap::Args;
use flotilla_dns::fleet::Fleet;
use flotilla_dns::geo::GeoTable;
use flotilla_dns::server::Server;
use flotilla_dns::snapshot::{Snapshot, SnapshotBuilder, SnapshotHandle, SnapshotOptions};
use flotilla_dns::zones::Zones;

pub(crate) mod clusterset;

/// Options of `flotilla dns`.
#[derive(Args, Debug)]
pub struct DnsArgs {
    /// The hub's kubeconfig (e.g. its DATA_DIR/admin.kubeconfig, or a credential bound to the
    /// hub's `flotilla-dns-reader` ClusterRole: it reads Clusters, Services, ResourceBindings,
    /// GlobalServices, HealthReports, ServiceImports and EndpointSlices).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Address to answer on, over UDP and TCP (e.g. 0.0.0.0:53, or 127.0.0.1:5353 unprivileged).
    #[arg(long, value_name = "ADDR")]
    listen: SocketAddr,
    /// The zone answered for, as the hub's `serve --dns-zone` names it (e.g. fleet.example.com).
    #[arg(long, value_name = "ZONE", value_parser = parse_zone)]
    zone: String,
    /// A file mapping client networks to regions (`CIDR REGION` lines, or a MaxMind DB:
    /// `maxmind FILE.mmdb` with `country CODE REGION` / `continent CODE REGION` lines) and the
    /// distances between regions (`distance REGION REGION N` lines), for the Geo strategy.
    #[arg(long, value_name = "FILE")]
    geo_file: Option<PathBuf>,
    /// The multi-cluster services zone answered beside ZONE on the same sockets:
    /// `<svc>.<ns>.svc.<CLUSTERSET_ZONE>` for the hub's ServiceImports; "" answers none.
    #[arg(long, value_name = "NAME", default_value = clusterset::DEFAULT_ZONE,
          value_parser = clusterset::parse_clusterset_zone)]
    clusterset_zone: String,
    /// Serve the fleet described by this JSON file (a flotilla_dns Fleet) instead of a hub's,
    /// reloaded when it changes (benchmarks and tests).
    #[arg(long, value_name = "FILE", hide = true, conflicts_with = "kubeconfig")]
    fleet_file: Option<PathBuf>,
}

/// Runs the DNS server until SIGTERM or Ctrl-C.
pub async fn run(args: DnsArgs, shutdown: impl std::future::Future<Output = ()>) -> Result<()> {
    lean_memory();
    let geo = read_geo(args.geo_file.as_deref())?;
    let handle = empty(&args.zone)?;
    let clusterset = clusterset::Clusterset::new(&args.clusterset_zone, &args.zone)?;
    let server = bind(
        args.listen,
        clusterset::zones(&handle, clusterset.as_ref())?,
    )?;
    tracing::info!(address = %server.local_addr(), zone = %args.zone, "flotilla DNS is serving");
    // Nothing is answered before the fleet is read: no NXDOMAIN for its names at a restart. A
    // fleet file feeds no clusterset zone.
    let fed = match args.fleet_file {
        Some(_) => clusterset::fed(&handle, None),
        None => clusterset::fed(&handle, clusterset.as_ref()),
    };
    let feeding = async {
        match (&args.kubeconfig, &args.fleet_file) {
            (Some(kubeconfig), _) => {
                let hub = crate::fleet::hub_client(Some(kubeconfig)).await?;
                tokio::try_join!(
                    from_hub(hub.clone(), &args.zone, geo, handle),
                    clusterset::follow(hub, clusterset),
                )
                .map(|_| ())
            }
            (None, Some(file)) => from_file(file, &args.zone, &geo, &handle).await,
            (None, None) => bail!(
                "flotilla dns needs the hub: pass --kubeconfig (e.g. the hub's DATA_DIR/admin.kubeconfig)"
            ),
        }
    };
    tokio::select! {
        r = async {
            fed.await;
            tracing::info!("answering from the fleet");
            server.run().await
        } => r.context("the DNS server stopped")?,
        r = feeding => r?,
        _ = shutdown => {}
    }
    tracing::info!("stopped");
    Ok(())
}

/// A zone as given on the command line: lower case, without the trailing dot, made of valid
/// DNS labels.
pub fn parse_zone(s: &str) -> Result<String, String> {
    let zone = s.trim().trim_end_matches('.').to_ascii_lowercase();
    if zone.is_empty() {
        return Err("the zone is empty: give a domain, e.g. fleet.example.com".into());
    }
    if zone.len() > 200 {
        return Err(format!(
            "{s:?} is too long for a zone: the names under it would not fit DNS's 253 characters"
        ));
    }
    for label in zone.split('.') {
        let valid = !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !valid {
            return Err(format!(
                "{s:?} is not a DNS zone: each dot-separated label must be 1-63 letters, digits or \
                 inner hyphens"
            ));
        }
    }
    Ok(zone)
}

/// The geo table of `--geo-file` (empty without one), read now so a bad file stops the start.
pub fn read_geo(file: Option<&Path>) -> Result<GeoTable> {
    let Some(file) = file else {
        return Ok(GeoTable::default());
    };
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read the geo file {}", file.display()))?;
    let dir = file.parent().unwrap_or(Path::new("."));
    GeoTable::parse_in(&text, dir)
        .with_context(|| format!("the geo file {} is not valid", file.display()))
}

/// A handle holding the zone's apex only, answered until the first fleet arrives.
pub fn empty(zone: &str) -> Result<SnapshotHandle> {
    let snapshot =
        Snapshot::empty(zone).with_context(|| format!("cannot serve the zone {zone}"))?;
    Ok(SnapshotHandle::new(snapshot))
}

/// Binds the DNS server's UDP and TCP sockets on `addr`, answering `zones`.
pub fn bind(addr: SocketAddr, zones: impl Into<Zones>) -> Result<Server> {
    Server::bind(addr, zones).with_context(|| {
        format!("cannot serve DNS on {addr}: is another server using it (or is the port privileged)? pick another address")
    })
}

/// Keeps `handle` current from the hub's watches (returns only when the hub cannot be read).
pub async fn from_hub(
    hub: kube::Client,
    zone: &str,
    geo: GeoTable,
    handle: SnapshotHandle,
) -> Result<()> {
    use flotilla_controllers::dns::source;
    let options = source::SourceOptions {
        geo,
        ..source::SourceOptions::new(zone)
    };
    source::run(hub, options, handle)
        .await
        .context("following the hub's fleet for DNS")
}

/// How often `--fleet-file`'s metadata is looked at (a `stat`, cheap enough to do often: a
/// verdict change in the file should show within a few milliseconds plus the parse).
const FLEET_FILE_POLL: Duration = Duration::from_millis(5);

/// What tells one version of the fleet file from another: modification time, size and inode
/// (a file renamed over it is a new inode even when the time and size look the same).
type Stamp = (SystemTime, u64, u64);

/// Serves the fleet in `file`, updating the snapshot whenever the file's modification time,
/// size or inode changes; a [`SnapshotBuilder`] redoes only the services that changed. A file
/// that does not parse (e.g. caught half written) leaves the last good snapshot in place and
/// is read again on the next change.
async fn from_file(file: &Path, zone: &str, geo: &GeoTable, handle: &SnapshotHandle) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let mut builder = SnapshotBuilder::new(zone, geo.clone(), SnapshotOptions::default())
        .with_context(|| format!("cannot serve the zone {zone}"))?;
    let mut seen: Option<Stamp> = None;
    let mut reported: Option<Stamp> = None;
    loop {
        let stamp = std::fs::metadata(file)
            .and_then(|m| Ok((m.modified()?, m.len(), m.ino())))
            .with_context(|| format!("cannot read the fleet file {}", file.display()));
        match stamp {
            Ok(stamp) if seen != Some(stamp) => match load_fleet(file, &mut builder) {
                Ok(snapshot) => {
                    if let Some(snapshot) = snapshot {
                        handle.store(snapshot);
                    }
                    seen = Some(stamp);
                    tracing::info!(file = %file.display(), "fleet file loaded");
                }
                Err(e) if reported != Some(stamp) => {
                    reported = Some(stamp);
                    tracing::warn!("{e:#}; still serving the last good fleet");
                }
                Err(_) => {}
            },
            Ok(_) => {}
            // The first read must succeed; later a missing file (being replaced) is waited for.
            Err(e) if seen.is_none() => return Err(e),
            Err(_) => {}
        }
        tokio::time::sleep(FLEET_FILE_POLL).await;
    }
}

/// Reads and parses the fleet file and updates the builder from it (`None`: nothing changed).
/// The file's bytes and the parsed fleet are dropped before returning: they are the largest
/// things besides the snapshot, and nothing needs them between changes.
fn load_fleet(file: &Path, builder: &mut SnapshotBuilder) -> Result<Option<Snapshot>> {
    let fleet: Fleet = {
        let text = std::fs::read(file)
            .with_context(|| format!("cannot read the fleet file {}", file.display()))?;
        serde_json::from_slice(&text)
            .with_context(|| format!("the fleet file {} is no fleet JSON", file.display()))?
    };
    builder
        .update_owned(fleet)
        .with_context(|| format!("the fleet in {} cannot be served", file.display()))
}

/// Makes the allocator (mimalloc, see `main.rs`) hand freed memory back at once and keeps the
/// kernel from backing the heap with 2 MiB transparent huge pages. `flotilla dns` idles between
/// fleet changes that free about as much as the snapshot holds (the file's bytes, the parsed
/// fleet, what the previous snapshot did not share); with mimalloc's defaults that memory stays
/// resident (a purge delay of 1 s that only runs on later allocations, huge pages half used).
/// With the fleet at 10,000 services × 3 endpoints this keeps about 15 MB less resident.
fn lean_memory() {
    crate::memory::no_huge_pages();
    crate::memory::purge_at_once();
}

#[cfg(test)]
mod tests {
    use super::parse_zone;

    #[test]
    fn zones_are_normalised_or_refused() {
        assert_eq!(
            parse_zone("Fleet.Example.COM.").unwrap(),
            "fleet.example.com"
        );
        assert_eq!(parse_zone("fleet.test").unwrap(), "fleet.test");
        for bad in ["", ".", "a..b", "-a.test", "a_b.test", "a b"] {
            assert!(parse_zone(bad).is_err(), "{bad:?} accepted");
        }
    }
}
