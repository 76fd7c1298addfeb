//! The latency phase: Works of one ConfigMap each are created on the hub at a steady offered
//! rate (open loop: each create is sent when due, whether or not earlier ones have returned),
//! spread round-robin over the members. Each Work's latency runs from its create request
//! returning to the receipt of the hub watch event that first shows it `Applied=True`; a
//! second clock stops when a watch on the member first shows the ConfigMap, which splits the
//! time into delivery (hub → member) and status feedback (member → Work status).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use flotilla_apis::names::execution_namespace;
use flotilla_apis::work::v1alpha1::Work;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::PostParams;
use kube::Api;

use super::objects::{self, BENCH_NAMESPACE};
use crate::fleet::{Fleet, Mode};
use crate::open_loop::OpenLoop;
use crate::progress::Progress;
use crate::stats::{self, Summary};
use crate::track::{self, Key, Tracker, Verdict};

/// How long the phase waits for the next Work to turn Applied before it gives up on the rest.
const STALL: Duration = Duration::from_secs(60);
/// Works slower than this are counted, with when they were created, to tell one stall (a
/// burst of slow Works created close together) from slowness spread over the run.
pub const SLOW: Duration = Duration::from_millis(250);

/// Latencies of one group of Works (all, or the members of one mode).
#[derive(Clone, Debug, Default)]
pub struct Split {
    /// Create returned → `Applied=True` received from the hub's watch.
    pub applied: Option<Summary>,
    /// Create returned → the ConfigMap received from the member's watch.
    pub in_member: Option<Summary>,
}

/// What the phase measured.
#[derive(Clone, Debug, Default)]
pub struct Latency {
    /// Works the phase meant to create.
    pub works: usize,
    /// Offered creates per second.
    pub rate: u64,
    /// The rate the creates were actually sent at.
    pub sent_rate: f64,
    /// Every Work.
    pub all: Split,
    /// Works of Pull members.
    pub pull: Split,
    /// Works of Push members.
    pub push: Split,
    /// Creates the hub refused or that failed, with the first error.
    pub create_errors: (usize, Option<String>),
    /// Works created but not seen Applied, and up to 5 of them with why.
    pub not_applied: (usize, Vec<String>),
    /// Works each member was given, member-1 first.
    pub per_member: Vec<usize>,
    /// Works Applied later than [`SLOW`].
    pub slow: Option<Slow>,
}

/// The Works that were Applied later than [`SLOW`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slow {
    /// How many.
    pub count: usize,
    /// When the first of them was created, from the start of the phase.
    pub from: Duration,
    /// When the last of them was created.
    pub to: Duration,
}

/// One created Work.
struct Created {
    key: Key,
    /// The ConfigMap's key in the member.
    cm: Key,
    member: usize,
    at: Instant,
}

/// Run the phase: `works` Works at `rate` per second.
pub async fn run(
    fleet: &mut Fleet,
    hub_works: &Tracker,
    run: &str,
    works: usize,
    rate: u64,
    progress: &Progress,
) -> Result<Latency> {
    let selector = track::selector(run);
    let mut in_members = Vec::new();
    for m in &fleet.members {
        let api: Api<ConfigMap> = Api::namespaced(m.client.clone(), BENCH_NAMESPACE);
        in_members.push(Tracker::start(api, &selector, |_: &ConfigMap| Verdict::Met).await?);
    }

    let phase = progress.phase(
        &format!(
            "latency: {} Works of 1 ConfigMap at {rate}/s over {} members, until Applied",
            works,
            fleet.members.len()
        ),
        works as u64,
    );
    let namespaces: Vec<String> = fleet
        .members
        .iter()
        .map(|m| execution_namespace(&m.name))
        .collect();
    let hub = fleet.client.clone();
    let load = OpenLoop::new();
    let started = Instant::now();
    let send = load.send(works, rate, started, |i| {
        let member = i % namespaces.len();
        let ns = namespaces[member].clone();
        let name = format!("{run}-lat-{i:05}");
        let work = objects::work(run, &ns, &name, std::slice::from_ref(&name));
        let api: Api<Work> = Api::namespaced(hub.clone(), &ns);
        async move {
            match api.create(&PostParams::default(), &work).await {
                Ok(_) => Ok(Created {
                    key: format!("{ns}/{name}"),
                    cm: format!("{BENCH_NAMESPACE}/{name}"),
                    member,
                    at: Instant::now(),
                }),
                Err(e) => Err(format!("{name}: {e}")),
            }
        }
    });
    let keys = || load.map(|c| c.key.clone());
    let trackers = [hub_works];
    let wait = track::wait_met(&trackers, keys, phase.bar(), STALL, || {
        fleet.check_alive()?;
        Ok(load.sending())
    });
    let (sent, waited) = tokio::join!(send, wait);
    let waited = waited?;

    let (created, create_errors) = load.take();
    let mut samples: HashMap<(Option<Mode>, bool), Vec<Duration>> = HashMap::new();
    let mut per_member = vec![0; fleet.members.len()];
    let mut slow: Option<Slow> = None;
    for c in &created {
        per_member[c.member] += 1;
        let mode = fleet.members[c.member].mode;
        let times = [
            (true, hub_works.met_at(&c.key)),
            (false, in_members[c.member].met_at(&c.cm)),
        ];
        for (applied, at) in times {
            // An event received before the create returned counts as 0 (the hub was slow to
            // answer, not fast to deliver).
            let Some(at) = at else { continue };
            let d = at.saturating_duration_since(c.at);
            if applied && d > SLOW {
                let t = c.at.saturating_duration_since(started);
                let s = slow.get_or_insert(Slow {
                    count: 0,
                    from: t,
                    to: t,
                });
                s.count += 1;
                s.from = s.from.min(t);
                s.to = s.to.max(t);
            }
            for group in [None, Some(mode)] {
                samples.entry((group, applied)).or_default().push(d);
            }
        }
    }
    let mut split = |group| Split {
        applied: stats::summarize(samples.remove(&(group, true)).unwrap_or_default()),
        in_member: stats::summarize(samples.remove(&(group, false)).unwrap_or_default()),
    };
    let result = Latency {
        works,
        rate,
        sent_rate: works as f64 / sent.as_secs_f64().max(1e-3),
        all: split(None),
        pull: split(Some(Mode::Pull)),
        push: split(Some(Mode::Push)),
        create_errors,
        not_applied: (created.len() - waited.met, waited.missing),
        per_member,
        slow,
    };
    phase.done(&match &result.all.applied {
        Some(s) => format!(
            "{} of {} Applied; p50 {}, p99 {}, max {}",
            waited.met,
            works,
            stats::ms(s.p50),
            stats::ms(s.p99),
            stats::ms(s.max)
        ),
        None => format!("none of {works} Applied"),
    });
    Ok(result)
}
