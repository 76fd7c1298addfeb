//! The DNS controller: the hub's writing half of DNS, run inside the hub's controllers when a
//! zone is configured (`serve --dns-zone`). Level-triggered: on every change (gathered for a
//! moment) and every second it judges the fleet ([`judge`], the same function the answers come
//! from) and writes only what differs:
//!
//! - each voter's HealthReport `endpoints` (in `flotilla-es-<cluster>` of every Joined
//!   Cluster): `spec.targets`, every endpoint of every federated Service with its check
//!   ([`desired::targets`]), server-side applied by the field manager `flotilla-dns`;
//! - the GlobalService's status, when there is one ([`desired::global_status`]);
//! - a Warning Event `FailOpen` on the hub Service when it starts failing open, and the
//!   gauges `flotilla_dns_fail_open_services` and `flotilla_dns_unhealthy_endpoints`;
//! - a `DNSEndpoint` named after the Service, owned by it, with its records for external-dns
//!   (never over one of that name that someone else wrote: that is logged once and left alone)
//!   ([`desired::records`]); one whose Service is no longer federated is deleted.

pub mod desired;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::cluster::v1alpha1::CONDITION_JOINED;
use flotilla_apis::conditions;
use flotilla_apis::externaldns::DNSEndpoint;
use flotilla_apis::names::execution_namespace;
use flotilla_apis::networking::v1alpha1::{GlobalService, HealthReport, HEALTH_REPORT_NAME};
use flotilla_dns::verdict::fail_open;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::{Api, Client, ResourceExt};
use serde_json::json;
use tokio::sync::Notify;

use super::fleet::{judge, Judged, World};
use super::watch::{feed, lean, watch, Stores};
use crate::{Error, Result};

/// Field manager of the DNS controller's writes.
pub const MANAGER: &str = "flotilla-dns";
/// Label on the DNSEndpoints the controller writes.
pub const MANAGED_BY_LABEL: &str = "app.kubernetes.io/managed-by";

/// How long changes are gathered before a round (writes need not be as quick as answers).
const GATHER: Duration = Duration::from_millis(100);
/// How often a round runs without changes (verdicts age with time).
const EVERY: Duration = Duration::from_secs(1);

/// What the DNS controller publishes for.
#[derive(Clone, Debug)]
pub struct ControllerOptions {
    /// The zone (no trailing dot), e.g. `fleet.example.com`.
    pub zone: String,
}

struct Context {
    hub: Client,
    zone: String,
    stores: Stores,
    dns_endpoints: Store<DNSEndpoint>,
    recorder: Recorder,
    /// Services failing open in the last round (`namespace/name`), for the Event on a change.
    failing_open: BTreeSet<String>,
    first_round: bool,
    /// DNSEndpoints of federated Services' names that someone else wrote (`namespace/name`),
    /// left alone and said once.
    foreign: std::sync::Mutex<BTreeSet<String>>,
}

/// Runs until dropped (returns `Ok` only if every watch ended).
pub async fn run(hub: Client, options: ControllerOptions) -> Result<()> {
    let changed = Arc::new(Notify::new());
    let (stores, feeds) = watch(&hub, changed.clone());
    let (dns_endpoints, writer) = reflector::store();
    let endpoint_feed = feed(
        Api::<DNSEndpoint>::all(hub.clone()),
        writer,
        lean,
        changed.clone(),
    );
    let recorder = Recorder::new(
        hub.clone(),
        Reporter {
            controller: MANAGER.into(),
            instance: None,
        },
    );
    let mut ctx = Context {
        hub,
        zone: options.zone.trim_end_matches('.').to_owned(),
        stores,
        dns_endpoints,
        recorder,
        failing_open: BTreeSet::new(),
        first_round: true,
        foreign: Default::default(),
    };
    let rounds = async {
        if !ctx.stores.ready().await || ctx.dns_endpoints.wait_until_ready().await.is_err() {
            return;
        }
        let mut tick = tokio::time::interval(EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = changed.notified() => tokio::time::sleep(GATHER).await,
                _ = tick.tick() => {}
            }
            let ok = round(&mut ctx).await;
            crate::metrics::metrics().reconciled("dns", ok);
        }
    };
    tokio::select! {
        _ = feeds => {},
        _ = endpoint_feed => {},
        _ = rounds => {},
    }
    Ok(())
}

/// One pass over the fleet; every failure is logged and retried next round. Returns whether
/// everything was written.
async fn round(ctx: &mut Context) -> bool {
    let world = ctx.stores.world();
    let judged = judge(&world, Timestamp::now());
    let mut ok = true;
    let mut log = |r: Result<()>| {
        if let Err(e) = r {
            tracing::warn!(error = %e, "DNS controller");
            ok = false;
        }
    };
    log(write_targets(ctx, &world, &judged).await);
    let metrics = crate::metrics::metrics();
    let unhealthy = judged
        .iter()
        .flat_map(|j| &j.service.endpoints)
        .filter(|e| !e.verdict.is_serving())
        .count();
    metrics.dns_unhealthy_endpoints.set(unhealthy as i64);
    let mut failing_open = BTreeSet::new();
    for j in &judged {
        let key = format!("{}/{}", j.service.namespace, j.service.name);
        if fail_open(&j.service.endpoints) {
            failing_open.insert(key.clone());
            if !ctx.failing_open.contains(&key) {
                log(fail_open_event(ctx, &world, j).await);
            }
        }
        if j.has_global_service {
            log(write_global_status(ctx, &world, j).await);
        }
        log(write_dns_endpoint(ctx, j).await);
    }
    metrics
        .dns_fail_open_services
        .set(failing_open.len() as i64);
    ctx.failing_open = failing_open;
    ctx.first_round = false;
    log(delete_stale_dns_endpoints(ctx, &judged).await);
    ok
}

/// `spec.targets` of every Joined voter's HealthReport, written where it differs.
async fn write_targets(ctx: &Context, world: &World, judged: &[Judged]) -> Result<()> {
    let targets = desired::targets(judged);
    for cluster in &world.clusters {
        let joined = cluster
            .status
            .as_ref()
            .is_some_and(|s| conditions::is_true(&s.conditions, CONDITION_JOINED));
        if !joined {
            continue;
        }
        let ns = execution_namespace(&cluster.name_any());
        let current = ctx
            .stores
            .reports()
            .get(&ObjectRef::new(HEALTH_REPORT_NAME).within(&ns));
        if current.is_some_and(|r| r.spec.targets == targets) {
            continue;
        }
        let body = json!({
            "apiVersion": "networking.flotilla.io/v1alpha1",
            "kind": "HealthReport",
            "metadata": {"name": HEALTH_REPORT_NAME, "namespace": ns},
            "spec": {"targets": targets},
        });
        Api::<HealthReport>::namespaced(ctx.hub.clone(), &ns)
            .patch(
                HEALTH_REPORT_NAME,
                &PatchParams::apply(MANAGER).force(),
                &Patch::Apply(&body),
            )
            .await
            .map_err(Error::hub(format!(
                "write the probe targets of {ns}/{HEALTH_REPORT_NAME}"
            )))?;
        tracing::debug!(namespace = %ns, targets = targets.len(), "probe targets");
    }
    Ok(())
}

async fn write_global_status(ctx: &Context, world: &World, j: &Judged) -> Result<()> {
    let (ns, name) = (&j.service.namespace, &j.service.name);
    let Some(global) = world
        .global_services
        .iter()
        .find(|g| g.metadata.namespace.as_ref() == Some(ns) && &g.name_any() == name)
    else {
        return Ok(());
    };
    let previous = global.status.as_ref();
    let status = desired::global_status(j, &ctx.zone, previous, Timestamp::now());
    if previous == Some(&status) {
        return Ok(());
    }
    let body = json!({
        "apiVersion": "networking.flotilla.io/v1alpha1",
        "kind": "GlobalService",
        "metadata": {"name": name, "namespace": ns},
        "status": status,
    });
    Api::<GlobalService>::namespaced(ctx.hub.clone(), ns)
        .patch_status(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .map(|_| ())
        .or_else(not_found)
        .map_err(Error::hub(format!(
            "write the status of GlobalService {ns}/{name}"
        )))
}

/// A Warning Event on the hub Service: every endpoint is down, all are answered. After a
/// restart, a Service whose GlobalService already says so gets none again.
async fn fail_open_event(ctx: &Context, world: &World, j: &Judged) -> Result<()> {
    let (ns, name) = (&j.service.namespace, &j.service.name);
    if ctx.first_round {
        let known = world.global_services.iter().any(|g| {
            g.metadata.namespace.as_ref() == Some(ns)
                && &g.name_any() == name
                && g.status.as_ref().is_some_and(|s| s.fail_open)
        });
        if known {
            return Ok(());
        }
    }
    tracing::warn!(namespace = %ns, service = %name, "every endpoint is down: answering all (fail open)");
    let reference = ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Service".into()),
        namespace: Some(ns.clone()),
        name: Some(name.clone()),
        uid: j.uid.clone(),
        ..ObjectReference::default()
    };
    let event = Event {
        type_: EventType::Warning,
        reason: "FailOpen".into(),
        note: Some(format!(
            "a majority of fresh voters sees all {} endpoints down; answering every one of them",
            j.service.endpoints.len()
        )),
        action: "Answer".into(),
        secondary: None,
    };
    ctx.recorder
        .publish(&event, &reference)
        .await
        .map_err(Error::hub(format!(
            "record the fail-open Event of Service {ns}/{name}"
        )))
}

/// The Service's DNSEndpoint, written where its records differ; none while it has no
/// endpoint (an empty one would publish nothing).
async fn write_dns_endpoint(ctx: &Context, j: &Judged) -> Result<()> {
    let (ns, name) = (&j.service.namespace, &j.service.name);
    let records = desired::records(&j.service, &ctx.zone);
    let current = ctx.dns_endpoints.get(&ObjectRef::new(name).within(ns));
    let api = Api::<DNSEndpoint>::namespaced(ctx.hub.clone(), ns);
    if records.is_empty() {
        if current.is_some_and(|c| managed(&c)) {
            return delete(&api, ns, name).await;
        }
        return Ok(());
    }
    if let Some(c) = current.as_ref().filter(|c| !managed(c)) {
        // Someone else's DNSEndpoint of the same name: never overwrite it.
        let key = format!("{ns}/{name}");
        let new = ctx
            .foreign
            .lock()
            .map(|mut f| f.insert(key))
            .unwrap_or(false);
        if new {
            tracing::warn!(
                namespace = %ns, name = %name, owner = ?c.owner_references().first().map(|o| &o.name),
                "a DNSEndpoint of this name exists and flotilla did not write it: the fleet name is not published to external-dns for this Service until it is removed"
            );
        }
        return Ok(());
    }
    let owner_uid = j.uid.clone().unwrap_or_default();
    let owned = current
        .as_ref()
        .is_some_and(|c| c.owner_references().iter().any(|o| o.uid == owner_uid));
    if owned && current.is_some_and(|c| c.spec.endpoints == records) {
        return Ok(());
    }
    let body = json!({
        "apiVersion": "externaldns.k8s.io/v1alpha1",
        "kind": "DNSEndpoint",
        "metadata": {
            "name": name,
            "namespace": ns,
            "labels": {MANAGED_BY_LABEL: MANAGER},
            "ownerReferences": [{
                "apiVersion": "v1",
                "kind": "Service",
                "name": name,
                "uid": owner_uid,
                "controller": true,
                "blockOwnerDeletion": false,
            }],
        },
        "spec": {"endpoints": records},
    });
    api.patch(
        name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&body),
    )
    .await
    .map_err(Error::hub(format!("write DNSEndpoint {ns}/{name}")))?;
    Ok(())
}

fn managed(e: &DNSEndpoint) -> bool {
    e.labels().get(MANAGED_BY_LABEL).map(String::as_str) == Some(MANAGER)
}

/// Deletes the DNSEndpoints this controller wrote for Services no longer federated.
async fn delete_stale_dns_endpoints(ctx: &Context, judged: &[Judged]) -> Result<()> {
    let wanted: HashMap<(&str, &str), ()> = judged
        .iter()
        .map(|j| ((j.service.namespace.as_str(), j.service.name.as_str()), ()))
        .collect();
    for e in ctx.dns_endpoints.state() {
        let ns = e.namespace().unwrap_or_default();
        let name = e.name_any();
        if managed(&e) && !wanted.contains_key(&(ns.as_str(), name.as_str())) {
            delete(&Api::namespaced(ctx.hub.clone(), &ns), &ns, &name).await?;
        }
    }
    Ok(())
}

async fn delete(api: &Api<DNSEndpoint>, ns: &str, name: &str) -> Result<()> {
    tracing::info!(namespace = %ns, name = %name, "deleting DNSEndpoint of a Service no longer federated");
    api.delete(name, &DeleteParams::default())
        .await
        .map(|_| ())
        .or_else(not_found)
        .map_err(Error::hub(format!("delete DNSEndpoint {ns}/{name}")))
}

/// A 404 means someone else finished the job.
fn not_found(e: kube::Error) -> std::result::Result<(), kube::Error> {
    match e {
        kube::Error::Api(s) if s.code == 404 => Ok(()),
        e => Err(e),
    }
}
