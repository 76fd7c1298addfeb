//! Heartbeats: the member's Lease on the hub, renewed every interval, and the Cluster's status.
//!
//! The Lease `flotilla-system/<cluster>` is the liveness signal: the hub's cluster-health
//! controller marks the Cluster `Ready=Unknown` and taints it when the Lease is not renewed in
//! time. The Cluster's status says what the member is (version, nodes, resources, APIs) and
//! whether the agent can reach it: `Ready=False` with reason `MemberUnreachable` when the agent
//! runs but its member does not answer (each beat asks the member's `/version`; its nodes and
//! pod requests are read every `resources_refresh`). The status is written when it changes and
//! at least every `status_refresh`, not every beat, so a fleet of idle clusters does not flood
//! watchers; while the Lease is renewed on time, a beat compares with what it last wrote
//! instead of reading the Cluster (a thousand members would otherwise read a hundred Clusters
//! a second).
//!
//! A credential the hub no longer accepts (401), a Lease or Cluster it forbids (403) or removed
//! (404) end the heartbeat with [`Error::Revoked`]: the agent must stop, not retry forever.

mod summary;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use flotilla_apis::cluster::v1alpha1::{
    ApiEnablement, Cluster, ClusterStatus, CONDITION_JOINED, CONDITION_READY, REASON_CLUSTER_READY,
    REASON_JOINED, REASON_MEMBER_UNREACHABLE,
};
use flotilla_apis::conditions::{self, Set};
use flotilla_apis::names::SYSTEM_NAMESPACE;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, Time};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;

use crate::{Error, Result};

/// How often, and what, the heartbeat reports.
#[derive(Clone, Debug)]
pub struct Options {
    /// How often the Lease is renewed (and the member probed).
    pub interval: Duration,
    /// The Lease's `leaseDurationSeconds`: how long the hub may wait before it doubts the agent.
    pub lease_duration: Duration,
    /// The Cluster's status is written at least this often, even when nothing changed.
    pub status_refresh: Duration,
    /// The member's nodes (counts, allocatable) and pod requests are read at most this often.
    pub resources_refresh: Duration,
    /// The member's served APIs are discovered at most this often.
    pub discovery_refresh: Duration,
    /// Written to the Lease's `holderIdentity`: who renews it.
    pub holder: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(10),
            lease_duration: Duration::from_secs(40),
            // As the kubelet's nodeStatusReportFrequency: liveness is the Lease's to tell, and
            // a status written every minute by a thousand members kept the hub's watchers of
            // Clusters decoding seventeen of them a second for nothing new.
            status_refresh: Duration::from_secs(300),
            resources_refresh: Duration::from_secs(60),
            discovery_refresh: Duration::from_secs(300),
            holder: "flotilla-agent".into(),
        }
    }
}

/// What is known of the member, refreshed at different paces.
#[derive(Default)]
struct Known {
    version: Option<String>,
    nodes: Option<(
        flotilla_apis::cluster::v1alpha1::NodeSummary,
        BTreeMap<String, summary::Amounts>,
    )>,
    apis: Option<(
        Instant,
        Vec<flotilla_apis::cluster::v1alpha1::ApiEnablement>,
    )>,
    resources: Option<(Instant, BTreeMap<String, summary::Amounts>)>,
    /// When the Cluster's status was last written.
    written: Option<Instant>,
    /// The status as last read or written, while the Lease has been renewed on every beat
    /// since: nothing else changes `Ready` then, so a beat that would write the same status
    /// decides so without reading the Cluster. `None` makes the next beat read it.
    last: Option<ClusterStatus>,
}

/// Renews `cluster`'s Lease and writes its status through `hub`, probing `member`, until the
/// hub revokes the credential (the only way it returns).
pub async fn run(hub: Client, member: Client, cluster: &str, options: Options) -> Result<()> {
    let leases: Api<Lease> = Api::namespaced(hub.clone(), SYSTEM_NAMESPACE);
    let clusters: Api<Cluster> = Api::all(hub);
    let mut known = Known::default();
    let now = tokio::time::Instant::now();
    let mut tick = tokio::time::interval_at(on_grid(now, beat_epoch()), options.interval);
    // Skip, not Delay: a late beat keeps the grid.
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut renewed: Option<Instant> = None;
    loop {
        tick.tick().await;
        // Each step boxed: their state lives only during a beat, and a hub's push workers
        // keep a thousand heartbeats waiting for their next tick.
        match Box::pin(renew(&leases, cluster, &options)).await {
            Ok(()) => {
                // A renewal that came late may have come after the hub took the Cluster for
                // gone (`Ready=Unknown`): read it again rather than trust what was written.
                if renewed.is_some_and(|t| t.elapsed() > options.interval * 3) {
                    known.last = None;
                }
                renewed = Some(Instant::now());
            }
            Err(e) => {
                known.last = None;
                fatal_or_log(e, cluster)?;
            }
        }
        let probe = Box::pin(probe(&member, &mut known, &options)).await;
        if let Err(e) = Box::pin(report(&clusters, cluster, &mut known, probe, &options)).await {
            fatal_or_log(e, cluster)?;
        }
    }
}

/// The step of the grid every heartbeat of a process beats on. A hub's thousand push workers
/// (or a simulator's thousand agents) then renew their Leases a few dozen at a time, and the
/// hub's store commits each step's renewals together: about four transactions a second for a
/// thousand clusters instead of a hundred, each with its own flush to disk.
const BEAT_GRID: Duration = Duration::from_millis(250);

/// The origin of the beat grid, shared by the process's heartbeats.
fn beat_epoch() -> tokio::time::Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    tokio::time::Instant::from_std(*EPOCH.get_or_init(Instant::now))
}

/// The first point of the beat grid from `epoch` at or after `now`.
fn on_grid(now: tokio::time::Instant, epoch: tokio::time::Instant) -> tokio::time::Instant {
    let since = now.saturating_duration_since(epoch).as_nanos();
    let step = BEAT_GRID.as_nanos();
    let steps = since.div_ceil(step);
    let offset = u64::try_from(steps * step).unwrap_or(u64::MAX);
    epoch + Duration::from_nanos(offset)
}

fn fatal_or_log(e: Error, cluster: &str) -> Result<()> {
    match e {
        Error::Revoked(_) => Err(e),
        e => {
            tracing::warn!(%cluster, error = %e, "heartbeat");
            Ok(())
        }
    }
}

/// Classifies a hub error: refusals of the credential are fatal.
fn hub_error(action: String, source: kube::Error) -> Error {
    match &source {
        kube::Error::Api(s) if s.code == 401 => Error::Revoked(format!(
            "the hub no longer accepts this agent's credential ({action}: 401 Unauthorized)"
        )),
        kube::Error::Api(s) if s.code == 403 || s.code == 404 => {
            Error::Revoked(format!("{action}: {}", s.message))
        }
        _ => Error::Hub { action, source },
    }
}

async fn renew(leases: &Api<Lease>, cluster: &str, options: &Options) -> Result<()> {
    let secs = i32::try_from(options.lease_duration.as_secs()).unwrap_or(i32::MAX);
    let spec = json!({
        "holderIdentity": options.holder,
        "leaseDurationSeconds": secs,
        "renewTime": MicroTime(Timestamp::now()),
    });
    let patched = leases
        .patch(
            cluster,
            &PatchParams::default(),
            &Patch::Merge(&json!({ "spec": spec })),
        )
        .await;
    match patched {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 404 => {
            // Push workers hold the hub's own credential and create the Lease on first beat;
            // a pull agent's Lease is created at approval, and may not be re-created by it.
            let lease: Lease = serde_json::from_value(json!({
                "metadata": {"name": cluster, "namespace": SYSTEM_NAMESPACE},
                "spec": spec,
            }))
            .map_err(|source| Error::Encode {
                object: format!("Lease {SYSTEM_NAMESPACE}/{cluster}"),
                source,
            })?;
            leases
                .create(&PostParams::default(), &lease)
                .await
                .map(|_| ())
                .map_err(|e| hub_error(format!("creating Lease {SYSTEM_NAMESPACE}/{cluster}"), e))
        }
        Err(e) => Err(hub_error(
            format!("renewing Lease {SYSTEM_NAMESPACE}/{cluster}"),
            e,
        )),
    }
}

/// `Ok` when the member answers (its version refreshed), else why not.
async fn probe(member: &Client, known: &mut Known, options: &Options) -> Result<(), String> {
    let version = tokio::time::timeout(options.interval, member.apiserver_version())
        .await
        .map_err(|_| {
            format!(
                "the member's API server did not answer within {:?}",
                options.interval
            )
        })?
        .map_err(|e| format!("the member's API server is unreachable: {e}"))?;
    known.version = Some(version.git_version);
    let stale = |at: Option<Instant>, every: Duration| at.is_none_or(|t| t.elapsed() >= every);
    if stale(known.apis.as_ref().map(|a| a.0), options.discovery_refresh) {
        match summary::api_enablements(member).await {
            Ok(apis) => known.apis = Some((Instant::now(), apis)),
            Err(e) => tracing::warn!(error = %e, "discovering the member's APIs"),
        }
    }
    // Nodes and pod requests at the same pace: the `/version` above is the liveness probe,
    // and a node list on every beat was one more member request per beat of every cluster.
    if stale(
        known.resources.as_ref().map(|r| r.0),
        options.resources_refresh,
    ) {
        match summary::nodes(member).await {
            Ok(nodes) => known.nodes = Some(nodes),
            Err(e) => tracing::warn!(error = %e, "listing the member's nodes"),
        }
        match summary::requested(member).await {
            Ok(r) => known.resources = Some((Instant::now(), r)),
            Err(e) => tracing::warn!(error = %e, "summing the member's pod requests"),
        }
    }
    Ok(())
}

async fn report(
    clusters: &Api<Cluster>,
    cluster: &str,
    known: &mut Known,
    probe: Result<(), String>,
    options: &Options,
) -> Result<()> {
    let fresh = known
        .written
        .is_some_and(|at| at.elapsed() < options.status_refresh);
    let last = known.last.as_ref();
    if fresh && last.is_some_and(|last| unchanged(last, known, &probe)) {
        return Ok(());
    }
    // Something to write: read the Cluster first, so the conditions others set (approval)
    // are kept.
    let current = clusters
        .get(cluster)
        .await
        .map_err(|e| hub_error(format!("reading Cluster {cluster}"), e))?;
    let previous = current.status.clone().unwrap_or_default();
    let mut status = next_status(&previous, known, &probe);
    if same(&status, &previous) && fresh {
        known.last = Some(previous);
        return Ok(());
    }
    let now = Timestamp::now();
    status.last_heartbeat_time = Some(Time(now));
    // Every member's heartbeat: the Cluster sent back is not read.
    flotilla_watch::quiet::patch(
        clusters,
        cluster,
        Some("status"),
        &PatchParams::default(),
        &Patch::Merge(&json!({ "status": changed(&status, &previous) })),
    )
    .await
    .map_err(|e| hub_error(format!("writing the status of Cluster {cluster}"), e))?;
    known.written = Some(Instant::now());
    known.last = Some(status);
    Ok(())
}

/// `status` as a merge patch over `previous`: the member's APIs, the bulk of a status, only
/// when they changed (left out, a merge patch keeps what is there).
fn changed(status: &ClusterStatus, previous: &ClusterStatus) -> serde_json::Value {
    let mut patch = json!(status);
    if status.api_enablements == previous.api_enablements {
        if let Some(fields) = patch.as_object_mut() {
            fields.remove("apiEnablements");
        }
    }
    patch
}

/// Equal but for the heartbeat time (field by field: a status with a member's APIs is big,
/// and this runs every beat of every cluster).
fn same(a: &ClusterStatus, b: &ClusterStatus) -> bool {
    same_except_apis(a, b) && a.api_enablements == b.api_enablements
}

/// Whether this beat's status would be `last`'s, but for the heartbeat time (compared without
/// copying the member's APIs, the bulk of a status, as every beat of every cluster does).
fn unchanged(last: &ClusterStatus, known: &Known, probe: &Result<(), String>) -> bool {
    same_except_apis(&next_except_apis(last, known, probe), last)
        && *apis(last, known) == last.api_enablements
}

/// As [`same`], leaving out the member's APIs.
fn same_except_apis(a: &ClusterStatus, b: &ClusterStatus) -> bool {
    let ClusterStatus {
        conditions,
        kubernetes_version,
        api_enablements: _,
        node_summary,
        resource_summary,
        last_heartbeat_time: _,
    } = a;
    *conditions == b.conditions
        && *kubernetes_version == b.kubernetes_version
        && *node_summary == b.node_summary
        && *resource_summary == b.resource_summary
}

/// `previous` with what this beat found: Joined, Ready from the probe, and what is known of
/// the member.
fn next_status(
    previous: &ClusterStatus,
    known: &Known,
    probe: &Result<(), String>,
) -> ClusterStatus {
    let mut status = next_except_apis(previous, known, probe);
    status.api_enablements = apis(previous, known).clone();
    status
}

/// The member's APIs a beat reports: as last discovered, else as `previous` said.
fn apis<'a>(previous: &'a ClusterStatus, known: &'a Known) -> &'a Vec<ApiEnablement> {
    known
        .apis
        .as_ref()
        .map_or(&previous.api_enablements, |(_, apis)| apis)
}

/// [`next_status`] with its APIs left empty.
fn next_except_apis(
    previous: &ClusterStatus,
    known: &Known,
    probe: &Result<(), String>,
) -> ClusterStatus {
    let mut status = ClusterStatus {
        conditions: previous.conditions.clone(),
        kubernetes_version: previous.kubernetes_version.clone(),
        api_enablements: Vec::new(),
        node_summary: previous.node_summary,
        resource_summary: previous.resource_summary.clone(),
        last_heartbeat_time: previous.last_heartbeat_time.clone(),
    };
    let now = Timestamp::now();
    let joined = Set {
        type_: CONDITION_JOINED,
        status: "True",
        reason: REASON_JOINED,
        message: "the agent is connected",
    };
    conditions::set(&mut status.conditions, joined, now);
    let ready = match &probe {
        Ok(()) => {
            status.kubernetes_version = known.version.clone();
            Set {
                type_: CONDITION_READY,
                status: "True",
                reason: REASON_CLUSTER_READY,
                message: "the member's API server answers",
            }
        }
        Err(why) => Set {
            type_: CONDITION_READY,
            status: "False",
            reason: REASON_MEMBER_UNREACHABLE,
            message: why,
        },
    };
    conditions::set(&mut status.conditions, ready, now);
    if let Some((nodes, allocatable)) = &known.nodes {
        status.node_summary = Some(*nodes);
        let requested = known.resources.as_ref().map(|r| &r.1);
        status.resource_summary = Some(summary::resources(
            allocatable,
            requested.unwrap_or(&BTreeMap::new()),
        ));
    }
    status
}

#[cfg(test)]
mod tests;
