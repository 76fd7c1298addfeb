//! `--clusterset-zone`: the multi-cluster services zone (`clusterset.local` by default) that
//! `flotilla dns` and `flotilla serve --dns-listen` answer beside the fleet zone, on the same
//! sockets, from the hub's ServiceImports and exported EndpointSlices.

use anyhow::{bail, Context, Result};
use flotilla_controllers::dns::clusterset;
use flotilla_dns::snapshot::SnapshotHandle;
use flotilla_dns::zones::Zones;

/// The default of `--clusterset-zone` (KEP-1645's domain).
pub const DEFAULT_ZONE: &str = clusterset::DEFAULT_ZONE;

/// `--clusterset-zone` as given: a zone like [`super::parse_zone`], or empty to answer none.
pub fn parse_clusterset_zone(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Ok(String::new());
    }
    super::parse_zone(s)
}

/// The clusterset zone a server answers, and the handle holding its snapshot.
pub struct Clusterset {
    zone: String,
    handle: SnapshotHandle,
}

impl Clusterset {
    /// The clusterset zone of `flag` (none when empty), answered beside `fleet_zone`.
    pub fn new(flag: &str, fleet_zone: &str) -> Result<Option<Clusterset>> {
        if flag.is_empty() {
            return Ok(None);
        }
        if flag == fleet_zone {
            bail!(
                "--clusterset-zone {flag} is also the fleet's zone: give the multi-cluster \
                 services another zone, or --clusterset-zone \"\" to answer none"
            );
        }
        let snapshot = clusterset::empty(flag)
            .with_context(|| format!("cannot serve the clusterset zone {flag}"))?;
        Ok(Some(Clusterset {
            zone: flag.to_string(),
            handle: SnapshotHandle::new(snapshot),
        }))
    }
}

/// The zones of one server: the fleet zone's `handle`, and the clusterset zone when answered.
pub fn zones(handle: &SnapshotHandle, clusterset: Option<&Clusterset>) -> Result<Zones> {
    let handles = std::iter::once(handle.clone()).chain(clusterset.map(|c| c.handle.clone()));
    Zones::new(handles).context("cannot answer the fleet and clusterset zones together")
}

/// Resolves once the fleet zone's `handle` and the clusterset zone's hold their first snapshot
/// from the hub (their sources store one as soon as their watches have listed everything, even
/// an empty fleet). A server runs only after it: until then queries wait in its sockets instead
/// of getting NXDOMAIN from the empty zones for names not read yet (a restart would otherwise
/// deny the fleet's names for a moment). The handles are read now, before anything feeds them.
pub fn fed(
    handle: &SnapshotHandle,
    clusterset: Option<&Clusterset>,
) -> impl std::future::Future<Output = ()> {
    let handles: Vec<SnapshotHandle> = std::iter::once(handle.clone())
        .chain(clusterset.map(|c| c.handle.clone()))
        .collect();
    let empty: Vec<_> = handles.iter().map(SnapshotHandle::load).collect();
    async move {
        while handles
            .iter()
            .zip(&empty)
            .any(|(h, first)| std::sync::Arc::ptr_eq(&h.load(), first))
        {
            tokio::time::sleep(FED_POLL).await;
        }
    }
}

/// How often [`fed`] looks at the handles.
const FED_POLL: std::time::Duration = std::time::Duration::from_millis(5);

/// Keeps the clusterset zone current from the hub's watches; never returns without one.
pub async fn follow(hub: kube::Client, clusterset: Option<Clusterset>) -> Result<()> {
    let Some(Clusterset { zone, handle }) = clusterset else {
        return std::future::pending().await;
    };
    clusterset::run(hub, &zone, handle)
        .await
        .context("following the hub's multi-cluster services for DNS")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_names_a_zone_or_turns_it_off() {
        assert_eq!(
            parse_clusterset_zone("ClusterSet.Local.").unwrap(),
            "clusterset.local"
        );
        assert_eq!(parse_clusterset_zone("").unwrap(), "");
        assert!(parse_clusterset_zone("a..b").is_err());
        assert!(Clusterset::new("", "fleet.test").unwrap().is_none());
        assert!(Clusterset::new("fleet.test", "fleet.test").is_err());
        let on = Clusterset::new(DEFAULT_ZONE, "fleet.test").unwrap();
        let fleet =
            SnapshotHandle::new(flotilla_dns::snapshot::Snapshot::empty("fleet.test").unwrap());
        let zones = zones(&fleet, on.as_ref()).unwrap();
        assert_eq!(zones.names(), ["clusterset.local", "fleet.test"]);
    }
}
