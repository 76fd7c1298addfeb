//! The latency phase: end-to-end propagation, from a template written on the hub to the change
//! showing in every member. A namespace gets a policy sending its Deployments to the three
//! members; K templates (1 replica each) are created at the offered rate and waited for until
//! each runs in all members (the secondary figure), then N changes are made at a fixed rate
//! (open loop), each raising one template's sequence annotation (change `i` goes to template
//! `i mod K`), and each is timed from the hub's answer to the write until a watch on every
//! member has shown that number or a later one (a member that skips a number because two
//! changes arrived together has still shown the change).
//!
//! The change is to the Deployment's own metadata, not its pod template, so the members do
//! not roll out pods for it: the figure is the control plane's, not the members' schedulers'.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::PostParams;
use kube::Api;

use super::objects::{self, seq, Raiser};
use crate::fleet::{Fleet, Mode};
use crate::open_loop::OpenLoop;
use crate::progress::Progress;
use crate::stats::{self, Summary};
use crate::track::{self, key, met_in_all, Key, Tracker, Verdict};

/// How long a wait goes on without anything new being seen before the rest is given up.
const STALL: Duration = Duration::from_secs(60);
/// A change not seen in every member within this long of its write counts as not seen.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// What the phase measured.
#[derive(Clone, Debug, Default)]
pub struct Latency {
    /// Templates created.
    pub templates: usize,
    /// Create returned → the Deployment in every member.
    pub create_in_members: Option<Summary>,
    /// Create returned → the Deployment's replica ready in every member.
    pub create_running: Option<Summary>,
    /// Creates that failed, with the first error.
    pub create_errors: (usize, Option<String>),
    /// Templates not in every member or not running there when the wait ended, and up to 5
    /// with why.
    pub not_running: (usize, Vec<String>),
    /// Changes made.
    pub changes: usize,
    /// Offered changes per second.
    pub rate: u64,
    /// The policy's `rolloutStrategy`, if it has one.
    pub rollout: Option<serde_json::Value>,
    /// The rate the changes were actually sent at.
    pub sent_rate: f64,
    /// Change write returned → shown by every member.
    pub all: Option<Summary>,
    /// The same for each member alone: name, how it is joined, latencies.
    pub per_member: Vec<(String, Mode, Option<Summary>)>,
    /// Change writes that failed, with the first error.
    pub write_errors: (usize, Option<String>),
    /// Changes not seen in every member within [`TIMEOUT`] (never, or later), and up to 5 of
    /// those never seen, with where.
    pub not_seen: (usize, Vec<String>),
}

/// A write that returned: the template's key, its sequence number, when the answer came.
struct Written {
    key: Key,
    seq: u64,
    at: Instant,
}

impl Written {
    /// The key a member's tracker records once it shows this write.
    fn shown(&self) -> Key {
        format!("{}@{}", self.key, self.seq)
    }
}

/// Run the phase in namespace `ns` (which it creates): `s.templates` templates, then
/// `s.changes` changes at `s.rate` per second, under a policy with `s.rollout`'s strategy.
pub async fn run(
    fleet: &mut Fleet,
    run: &str,
    ns: &str,
    s: &super::Scale,
    progress: &Progress,
) -> Result<Latency> {
    let (templates, changes, rate) = (s.templates, s.changes, s.rate);
    let names: Vec<String> = fleet.members.iter().map(|m| m.name.clone()).collect();
    let kind = fleet.hub.kinds().policy();
    let policy = objects::policy(&kind, ns, "latency", &names, s.rollout.as_ref())?;
    objects::setup(&fleet.client, run, ns, &kind, &policy).await?;
    let mut in_members = Vec::new();
    for m in &fleet.members {
        let api: Api<Deployment> = Api::namespaced(m.client.clone(), ns);
        let t = Tracker::start_keyed(api, &track::selector(run), judge)
            .await
            .with_context(|| format!("watching Deployments in {}", m.name))?;
        in_members.push(t.named(&m.name));
    }
    let trackers: Vec<&Tracker> = in_members.iter().collect();
    let hub: Api<Deployment> = Api::namespaced(fleet.client.clone(), ns);

    // --- The templates, until they run everywhere.
    let phase = progress.phase(
        &format!(
            "latency: {templates} Deployments of 1 replica at {rate}/s, until running in {} \
             members",
            names.len()
        ),
        2 * templates as u64,
    );
    let creates = OpenLoop::new();
    let send = creates.send(templates, rate, Instant::now(), |i| {
        let (hub, name) = (hub.clone(), format!("{run}-{i:05}"));
        let d = objects::deployment(run, ns, &name, 1);
        async move {
            let d = d.map_err(|e| format!("{e:#}"))?;
            match hub.create(&PostParams::default(), &d).await {
                Ok(d) => Ok(Written {
                    key: key(&d),
                    seq: 0,
                    at: Instant::now(),
                }),
                Err(e) => Err(format!("{name}: {e}")),
            }
        }
    });
    let keys = || {
        let mut keys = creates.map(Written::shown);
        keys.extend(creates.map(|w| running(&w.key)));
        keys
    };
    let wait = track::wait_met(&trackers, keys, phase.bar(), STALL, || {
        fleet.check_alive()?;
        Ok(creates.sending())
    });
    let (_, waited) = tokio::join!(send, wait);
    let waited = waited?;
    let (created, create_errors) = creates.take();
    let since = |w: &Written, shown: &str| {
        met_in_all(&trackers, shown).map(|at| at.saturating_duration_since(w.at))
    };
    let create_in_members = stats::summarize(
        created
            .iter()
            .filter_map(|w| since(w, &w.shown()))
            .collect(),
    );
    let running_for: Vec<Duration> = created
        .iter()
        .filter_map(|w| since(w, &running(&w.key)))
        .collect();
    let not_running = (created.len() - running_for.len(), waited.missing);
    let create_running = stats::summarize(running_for);
    phase.done(&format!(
        "{} of {templates} running in every member; create → running p99 {}",
        created.len() - not_running.0,
        create_running.map_or("–".into(), |s| stats::ms(s.p99))
    ));
    if created.is_empty() {
        anyhow::bail!(
            "no template could be created ({})",
            create_errors.1.unwrap_or_default()
        );
    }

    // --- The changes.
    let phase = progress.phase(
        &format!(
            "latency: {changes} changes at {rate}/s over {} templates, until in every member",
            created.len()
        ),
        changes as u64,
    );
    let writes = OpenLoop::new();
    let started = Instant::now();
    let raiser = Raiser::new(hub.clone(), created.iter().map(|w| w.key.clone()));
    let send = writes.send(changes, rate, started, |i| {
        let (key, seq, raise) = raiser.raise(i);
        async move {
            raise.await?;
            Ok(Written {
                key,
                seq,
                at: Instant::now(),
            })
        }
    });
    let keys = || writes.map(Written::shown);
    let wait = track::wait_met(&trackers, keys, phase.bar(), STALL, || {
        fleet.check_alive()?;
        Ok(writes.sending())
    });
    let (sent, waited) = tokio::join!(send, wait);
    let waited = waited?;
    let (written, write_errors) = writes.take();

    let all: Vec<Duration> = written
        .iter()
        .filter_map(|w| since(w, &w.shown()))
        .collect();
    let late = all.iter().filter(|d| **d > TIMEOUT).count();
    let per_member = fleet
        .members
        .iter()
        .zip(&trackers)
        .map(|(m, t)| {
            let each = written
                .iter()
                .filter_map(|w| {
                    t.met_at(&w.shown())
                        .map(|at| at.saturating_duration_since(w.at))
                })
                .collect();
            (m.name.clone(), m.mode, stats::summarize(each))
        })
        .collect();
    let all = stats::summarize(all);
    phase.done(&match &all {
        Some(s) => format!(
            "{} of {} in every member; p50 {}, p99 {}, max {}",
            waited.met,
            written.len(),
            stats::ms(s.p50),
            stats::ms(s.p99),
            stats::ms(s.max)
        ),
        None => format!("none of {} seen in every member", written.len()),
    });
    Ok(Latency {
        templates,
        create_in_members,
        create_running,
        create_errors,
        not_running,
        changes,
        rate,
        rollout: s.rollout.clone(),
        sent_rate: changes as f64 / sent.as_secs_f64().max(1e-3),
        all,
        per_member,
        write_errors,
        not_seen: (written.len() - waited.met + late, waited.missing),
    })
}

/// The key a member's tracker records once the Deployment `key` runs all its replicas there.
fn running(key: &str) -> Key {
    format!("{key}#running")
}

/// What a member's Deployment shows: every sequence number up to its own (a later change
/// includes the earlier ones), and whether its replicas are ready.
pub(crate) fn judge(d: &Deployment) -> Vec<(Key, Verdict)> {
    let k = key(d);
    let mut out: Vec<(Key, Verdict)> = (0..=seq(d))
        .map(|s| (format!("{k}@{s}"), Verdict::Met))
        .collect();
    let want = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let ready = d
        .status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0);
    let verdict = if ready >= want {
        Verdict::Met
    } else {
        Verdict::Pending(Some(format!("{ready}/{want} replicas ready")))
    };
    out.push((running(&k), verdict));
    out
}

#[cfg(test)]
mod tests;
