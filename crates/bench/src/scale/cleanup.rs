//! Cleanup at scale: the load's namespace is deleted on the hub, which deletes its templates;
//! the garbage collector deletes their bindings, the binding controller their Works, and the
//! push workers prune the copies from the simulated clusters (a Work keeps its finalizer until
//! its copy is gone, so no Works left means no copies left). Timed until the namespace and
//! every Work of it are gone; then the hub's memory is read.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::DeleteParams;
use kube::Api;

use super::fleet::SimFleet;
use crate::fleet::FLOTILLA;
use crate::procs::Rss;
use crate::progress::Progress;
use crate::propagation::cleanup::works_in;
use crate::propagation::memory::SETTLE;

/// How long the phase waits without fewer Works before it gives up on the rest.
const STALL: Duration = Duration::from_secs(180);

/// What cleanup found.
#[derive(Clone, Debug)]
pub struct Cleanup {
    /// Works of the namespace when it was deleted.
    pub works: usize,
    /// From the delete to the namespace and its Works gone; `None` if that never happened.
    pub took: Option<Duration>,
    /// Works left when the phase stopped waiting.
    pub works_left: usize,
    /// The hub's memory afterwards.
    pub hub: Rss,
}

/// Delete namespace `ns` on the hub and wait for it and its Works to go.
pub async fn run(set: &mut SimFleet, ns: &str, progress: &Progress) -> Result<Cleanup> {
    let works = works_of(set, ns).await?;
    let phase = progress.phase(
        &format!("cleanup: deleting {ns} on the hub, which prunes {works} Works"),
        works as u64,
    );
    let api: Api<Namespace> = Api::all(set.client.clone());
    let started = Instant::now();
    match api.delete(ns, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 404 => {}
        Err(e) => return Err(e).with_context(|| format!("deleting {ns} on the hub")),
    }
    let mut last = (usize::MAX, Instant::now());
    let (took, works_left) = loop {
        set.check_alive()?;
        let left = works_of(set, ns).await?;
        let ns_left = api
            .get_opt(ns)
            .await
            .context("reading the namespace")?
            .is_some();
        phase.bar().set_position(works.saturating_sub(left) as u64);
        if left == 0 && !ns_left {
            break (Some(started.elapsed()), 0);
        }
        if left + usize::from(ns_left) != last.0 {
            last = (left + usize::from(ns_left), Instant::now());
        }
        if last.1.elapsed() > STALL {
            break (None, left);
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    };
    phase.done(&match took {
        Some(t) => format!("{works} Works gone in {:.1} s", t.as_secs_f64()),
        None => format!("{works_left} Works left"),
    });
    tokio::time::sleep(SETTLE).await;
    Ok(Cleanup {
        works,
        took,
        works_left,
        hub: crate::procs::rss(set.hub.pid())?,
    })
}

/// Works on the hub of the bindings in `ns`.
async fn works_of(set: &SimFleet, ns: &str) -> Result<usize> {
    works_in(&set.client, &FLOTILLA, &[ns.to_string()]).await
}
