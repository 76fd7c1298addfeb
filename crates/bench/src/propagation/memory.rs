//! The scale phase: N Deployments of 0 replicas in a namespace whose policy sends them to the
//! three members — N bindings, 3·N Works, 3·N Deployments in the members — created as fast as
//! a few concurrent clients can, and timed until every binding on the hub is `FullyApplied`.
//! The hub's resident memory (VmRSS, and the peak VmHWM) is read before and once they all are.
//!
//! 0 replicas: the members (three control planes sharing this machine and one etcd, with KWOK
//! playing 3 nodes of 110 pods each) could not run 10,000 pods, let alone 30,000, and the hub's
//! work per Deployment does not depend on it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use flotilla_apis::work::v1alpha1::CONDITION_FULLY_APPLIED;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{DynamicObject, PostParams};
use kube::{Api, ResourceExt};

use super::count_in;
use super::objects;
use crate::figures::thousands;
use crate::fleet::{self, Fleet};
use crate::procs::Rss;
use crate::progress::Progress;
use crate::track::{self, Key, Tracker, Verdict};

/// How long the wait goes on without another binding turning FullyApplied.
const STALL: Duration = Duration::from_secs(180);
/// How long the hub is left alone before its memory is read, so it is not caught mid-burst.
pub const SETTLE: Duration = Duration::from_secs(5);
/// Creates in flight at once (the phase measures propagation, not the create rate).
pub const CONCURRENCY: usize = 16;

/// What the phase measured.
#[derive(Clone, Debug)]
pub struct Memory {
    /// Deployments created.
    pub deployments: usize,
    /// The hub's memory before the first create.
    pub before: Rss,
    /// Its memory once every binding was FullyApplied (after [`SETTLE`]).
    pub after: Rss,
    /// From the first create to the last create returned.
    pub creates_took: Duration,
    /// From the first create to the last binding seen FullyApplied.
    pub took: Duration,
    /// Bindings not FullyApplied when the wait ended, and up to 5 with why.
    pub not_applied: (usize, Vec<String>),
    /// Each member afterwards: its name, Deployments of the phase in it, whether its Cluster
    /// is still Ready on the hub.
    pub members: Vec<(String, usize, bool)>,
}

impl Memory {
    /// Deployments propagated per second (to every member), from the first create.
    pub fn throughput(&self) -> f64 {
        (self.deployments - self.not_applied.0) as f64 / self.took.as_secs_f64().max(1e-3)
    }
}

/// Run the phase in namespace `ns` (which it creates) with `n` Deployments.
pub async fn run(
    fleet: &mut Fleet,
    run: &str,
    ns: &str,
    n: usize,
    rollout: Option<&serde_json::Value>,
    progress: &Progress,
) -> Result<Memory> {
    let names: Vec<String> = fleet.members.iter().map(|m| m.name.clone()).collect();
    let kind = fleet.hub.kinds().policy();
    let policy = objects::policy(&kind, ns, "scale", &names, rollout)?;
    objects::setup(&fleet.client, run, ns, &kind, &policy).await?;
    let bindings = Tracker::start_keyed(
        Api::<DynamicObject>::namespaced_with(
            fleet.client.clone(),
            ns,
            &fleet.hub.kinds().binding(),
        ),
        "",
        fully_applied,
    )
    .await
    .context("watching the bindings on the hub")?;
    let before = fleet.hub.rss()?;
    let keys: Vec<Key> = (0..n).map(|i| format!("{ns}/{}", name(run, i))).collect();

    let phase = progress.phase(
        &format!(
            "scale: {} Deployments of 0 replicas to {} members, until every binding is \
             FullyApplied",
            thousands(n as u64),
            names.len()
        ),
        n as u64,
    );
    let started = Instant::now();
    let hub: Api<Deployment> = Api::namespaced(fleet.client.clone(), ns);
    let (creates_took, waited) = create_and_wait(
        &hub,
        n,
        |i| objects::deployment(run, ns, &name(run, i), 0),
        &bindings,
        &keys,
        phase.bar(),
        || fleet.check_alive(),
    )
    .await?;
    let took = started.elapsed();
    phase.done(&format!(
        "{} of {} FullyApplied ({:.0}/s)",
        thousands(waited.met as u64),
        thousands(n as u64),
        waited.met as f64 / took.as_secs_f64().max(1e-3)
    ));
    tokio::time::sleep(SETTLE).await;
    let after = fleet.hub.rss()?;
    let ready: Vec<String> = fleet
        .clusters()
        .await?
        .iter()
        .filter(|c| fleet::ready(c))
        .map(ResourceExt::name_any)
        .collect();
    let mut members = Vec::new();
    for m in &fleet.members {
        let count = count_in(&m.client, ns)
            .await
            .with_context(|| format!("counting the Deployments in {}", m.name))?;
        members.push((m.name.clone(), count, ready.contains(&m.name)));
    }
    Ok(Memory {
        deployments: n,
        before,
        after,
        creates_took,
        took,
        not_applied: (n - waited.met, waited.missing),
        members,
    })
}

/// Create Deployments `build(0..n)` on `hub`, [`CONCURRENCY`] at a time, while waiting until
/// `tracker` has seen each of `keys` met (counted on `bar`; `alive` fails the wait when a
/// process died). Waiting starts with the creates, so the bar moves from the first key met; an
/// error on either side (a failed create, a process that died) ends both. Returns how long the
/// creates took and how the wait ended.
pub(crate) async fn create_and_wait(
    hub: &Api<Deployment>,
    n: usize,
    build: impl Fn(usize) -> Result<Deployment>,
    tracker: &Tracker,
    keys: &[Key],
    bar: &indicatif::ProgressBar,
    mut alive: impl FnMut() -> Result<()>,
) -> Result<(Duration, track::Waited)> {
    let started = Instant::now();
    let creating = AtomicBool::new(true);
    let create = async {
        let created = futures::stream::iter(0..n)
            .map(|i| {
                let (hub, d) = (hub.clone(), build(i));
                async move {
                    let d = d?;
                    let name = format!("{}/{}", d.namespace().unwrap_or_default(), d.name_any());
                    hub.create(&PostParams::default(), &d)
                        .await
                        .with_context(|| format!("creating Deployment {name} on the hub"))
                }
            })
            .buffer_unordered(CONCURRENCY)
            .try_for_each(|_| futures::future::ok(()))
            .await;
        creating.store(false, Ordering::SeqCst);
        created.map(|()| started.elapsed())
    };
    let trackers = [tracker];
    let wait = track::wait_met(
        &trackers,
        || keys.to_vec(),
        bar,
        STALL,
        || {
            alive()?;
            Ok(creating.load(Ordering::SeqCst))
        },
    );
    tokio::try_join!(create, wait)
}

/// The name of Deployment `i` of the phase.
fn name(run: &str, i: usize) -> String {
    format!("{run}-scale-{i:05}")
}

/// A binding (flotilla's or Karmada's: the same shape) is keyed by its template
/// (`namespace/name`), met once `FullyApplied=True`.
pub(crate) fn fully_applied(b: &DynamicObject) -> Vec<(Key, Verdict)> {
    let name = b.data["spec"]["resource"]["name"]
        .as_str()
        .unwrap_or_default();
    let key = format!("{}/{name}", b.namespace().unwrap_or_default());
    let empty = Vec::new();
    let conditions = b.data["status"]["conditions"].as_array().unwrap_or(&empty);
    let cond = conditions
        .iter()
        .find(|c| c["type"] == CONDITION_FULLY_APPLIED);
    let text = |c: &serde_json::Value, f: &str| c[f].as_str().unwrap_or_default().to_string();
    let verdict = match cond {
        Some(c) if c["status"] == "True" => Verdict::Met,
        Some(c) => Verdict::Pending(Some(format!(
            "FullyApplied={}: {}",
            text(c, "status"),
            text(c, "message")
        ))),
        None => Verdict::Pending(Some("no FullyApplied condition yet".into())),
    };
    vec![(key, verdict)]
}
