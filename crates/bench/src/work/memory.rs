//! The agent memory phase: one pull member's Works grow to a total of M manifests (Works of 100
//! ConfigMaps), and once all are Applied the agent's resident memory (VmRSS, and the peak
//! VmHWM) is read from /proc and compared with what it was before.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use flotilla_apis::names::execution_namespace;
use flotilla_apis::work::v1alpha1::Work;
use futures::{StreamExt, TryStreamExt};
use kube::api::PostParams;
use kube::Api;

use super::objects;
use crate::figures::{mib, thousands};
use crate::fleet::{Fleet, Mode};
use crate::procs::{self, Rss};
use crate::progress::Progress;
use crate::track::{self, Key, Tracker};

/// ConfigMaps per Work.
pub const PER_WORK: usize = 100;
/// How long the phase waits for the next Work to turn Applied before it gives up on the rest.
const STALL: Duration = Duration::from_secs(120);
/// How long the agent is left alone before its memory is read, so it is not caught mid-burst.
pub const SETTLE: Duration = Duration::from_secs(5);
/// Creates in flight at once (the phase measures memory, not the create rate).
const CONCURRENCY: usize = 4;

/// What the phase measured.
#[derive(Clone, Debug)]
pub struct Memory {
    /// The member whose agent was measured.
    pub member: String,
    /// Manifests the agent delivered before the phase.
    pub before_manifests: usize,
    /// Its memory then.
    pub before: Rss,
    /// Manifests it delivers at the end of the phase.
    pub manifests: usize,
    /// Works the phase added.
    pub works: usize,
    /// Its memory once they were all Applied.
    pub after: Rss,
    /// From the first create to the last Work Applied.
    pub took: Duration,
    /// Works added but not seen Applied, and up to 5 of them with why.
    pub not_applied: (usize, Vec<String>),
    /// The hub's memory at the end of the phase.
    pub hub: Rss,
}

impl Memory {
    /// Growth of the agent's VmRSS per 1,000 manifests added (negative if it shrank).
    pub fn per_thousand(&self) -> Option<f64> {
        let added = self.manifests.checked_sub(self.before_manifests)?;
        (added > 0)
            .then(|| (self.after.now as f64 - self.before.now as f64) * 1000.0 / added as f64)
    }
}

/// Run the phase on the first pull member, which already delivers `existing` manifests, up to
/// `total` manifests.
pub async fn run(
    fleet: &mut Fleet,
    hub_works: &Tracker,
    run: &str,
    existing: usize,
    total: usize,
    progress: &Progress,
) -> Result<Memory> {
    let Some(target) = fleet.members.iter().position(|m| m.mode == Mode::Pull) else {
        bail!("no member is joined in Pull mode, so there is no agent to measure");
    };
    let member = fleet.members[target].name.clone();
    let pid = fleet.members[target]
        .agent
        .as_ref()
        .map(|a| a.pid())
        .context("the pull member has no agent process")?;
    let before = procs::rss(pid)?;
    let sizes = objects::batches(total.saturating_sub(existing), PER_WORK);
    let ns = execution_namespace(&member);
    let keys: Vec<Key> = (0..sizes.len())
        .map(|j| format!("{ns}/{run}-mem-{j:04}"))
        .collect();

    let phase = progress.phase(
        &format!(
            "memory: {member} grows from {} to {} manifests ({} Works of up to {PER_WORK} \
             ConfigMaps), until Applied",
            thousands(existing as u64),
            thousands(total as u64),
            sizes.len()
        ),
        sizes.len() as u64,
    );
    let started = Instant::now();
    let api: Api<Work> = Api::namespaced(fleet.client.clone(), &ns);
    futures::stream::iter(sizes.iter().enumerate())
        .map(|(j, size)| {
            let name = format!("{run}-mem-{j:04}");
            let cms: Vec<String> = (0..*size).map(|k| format!("{name}-{k:03}")).collect();
            let work = objects::work(run, &ns, &name, &cms);
            let (api, ns) = (api.clone(), ns.clone());
            async move {
                api.create(&PostParams::default(), &work)
                    .await
                    .with_context(|| format!("creating Work {ns}/{name} on the hub"))
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_for_each(|_| futures::future::ok(()))
        .await?;
    let waited = track::wait_met(
        &[hub_works],
        || keys.clone(),
        phase.bar(),
        STALL,
        || {
            fleet.check_alive()?;
            Ok(false)
        },
    )
    .await?;
    let took = started.elapsed();
    phase.done(&format!("{} of {} Works Applied", waited.met, sizes.len()));
    tokio::time::sleep(SETTLE).await;
    let after = procs::rss(pid)?;
    let hub = fleet.hub.rss()?;
    progress.note(&format!(
        "{member} agent: VmRSS {} before, {} at {} manifests (peak {})",
        mib(before.now),
        mib(after.now),
        thousands(total as u64),
        mib(after.peak)
    ));
    Ok(Memory {
        member,
        before_manifests: existing,
        before,
        manifests: existing + sizes.iter().sum::<usize>(),
        works: sizes.len(),
        after,
        took,
        not_applied: (sizes.len() - waited.met, waited.missing),
        hub,
    })
}
