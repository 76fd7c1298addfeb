//! Cleanup, measured too: the run's namespaces are deleted on the hub, which deletes the
//! templates; the hub's garbage collector deletes their bindings, the binding controller their
//! Works, and the agents and the push worker prune the copies from the members. The phase waits
//! until the namespaces are gone from the hub, no Deployment of theirs is left in any member and
//! their Works are gone (or nothing moved for a while), then reads the hub's memory. The namespaces the agents
//! created in the members are removed when empty; one with leftovers is kept as evidence.

use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{DeleteParams, DynamicObject, ListParams};
use kube::{Api, Client, ResourceExt};

use super::count_in;
use crate::fleet::{Fleet, Kinds};
use crate::procs::Rss;
use crate::progress::Progress;

/// How long the phase waits without anything more going before it gives up on the rest.
const STALL: Duration = Duration::from_secs(180);

/// What cleanup found.
#[derive(Clone, Debug, Default)]
pub struct Cleanup {
    /// Deployments of the run in the members when the namespaces were deleted.
    pub copies: usize,
    /// From the delete to the namespaces gone and the members empty; `None` if that never
    /// happened.
    pub took: Option<Duration>,
    /// Namespaces still on the hub when the phase stopped waiting.
    pub hub_left: Vec<String>,
    /// Works of the run's bindings left on the hub.
    pub works_left: usize,
    /// Deployments of the run left in each member.
    pub left: Vec<(String, usize)>,
    /// The hub's memory afterwards.
    pub hub: Option<Rss>,
}

/// Delete `namespaces` on the hub and wait for them and their copies to go.
pub async fn run(
    fleet: &mut Fleet,
    namespaces: &[String],
    settle: Duration,
    progress: &Progress,
) -> Result<Cleanup> {
    let copies = in_members(fleet, namespaces).await?;
    let copies: usize = copies.iter().map(|(_, n)| n).sum();
    let phase = progress.phase(
        &format!(
            "cleanup: deleting {} on the hub; the members prune {copies} Deployments",
            namespaces.join(" and ")
        ),
        copies as u64,
    );
    let api: Api<Namespace> = Api::all(fleet.client.clone());
    let started = Instant::now();
    for ns in namespaces {
        match api.delete(ns, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(e).with_context(|| format!("deleting {ns} on the hub")),
        }
    }
    let mut last = (usize::MAX, Vec::new(), Instant::now());
    let (hub_left, left, works_left) = loop {
        fleet.check_alive()?;
        let mut hub_left = Vec::new();
        for ns in namespaces {
            if api
                .get_opt(ns)
                .await
                .context("reading a namespace")?
                .is_some()
            {
                hub_left.push(ns.clone());
            }
        }
        let left = in_members(fleet, namespaces).await?;
        let remaining: usize = left.iter().map(|(_, n)| n).sum();
        // A Work keeps its finalizer until the member's copy is pruned, so it goes a moment
        // after the member is empty: wait for it too (listed once the rest is gone).
        let rest_gone = remaining == 0 && hub_left.is_empty();
        let works = if rest_gone {
            works_of(fleet, namespaces).await?
        } else {
            usize::MAX / 2
        };
        phase
            .bar()
            .set_position(copies.saturating_sub(remaining) as u64);
        let now = (remaining + works, hub_left.clone());
        if now != (last.0, last.1.clone()) {
            last = (now.0, now.1, Instant::now());
        }
        if rest_gone && works == 0 {
            break (hub_left, left, 0);
        }
        if last.2.elapsed() > STALL {
            break (hub_left, left, works_of(fleet, namespaces).await?);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let remaining: usize = left.iter().map(|(_, n)| n).sum();
    let took =
        (remaining == 0 && works_left == 0 && hub_left.is_empty()).then(|| started.elapsed());
    phase.done(&match took {
        Some(_) => format!("namespaces gone, {copies} copies pruned"),
        None => format!(
            "{remaining} copies left in the members, {} namespaces on the hub",
            hub_left.len()
        ),
    });
    tokio::time::sleep(settle).await;
    let hub = Some(fleet.hub.rss()?);
    remove_empty(fleet, namespaces, &left, progress).await;
    Ok(Cleanup {
        copies,
        took,
        hub_left,
        works_left,
        left,
        hub,
    })
}

/// Works on the hub of the bindings in `namespaces`.
async fn works_of(fleet: &Fleet, namespaces: &[String]) -> Result<usize> {
    works_in(&fleet.client, fleet.hub.kinds(), namespaces).await
}

/// Works on the control plane of `hub` (whose kinds are `kinds`) of the bindings in
/// `namespaces`.
pub(crate) async fn works_in(hub: &Client, kinds: &Kinds, namespaces: &[String]) -> Result<usize> {
    Ok(Api::<DynamicObject>::all_with(hub.clone(), &kinds.work())
        .list_metadata(&ListParams::default())
        .await
        .context("listing the Works left on the hub")?
        .items
        .iter()
        .filter(|w| {
            w.annotations()
                .get(kinds.binding_namespace_annotation)
                .is_some_and(|ns| namespaces.contains(ns))
        })
        .count())
}

/// Deployments of `namespaces` in each member.
async fn in_members(fleet: &Fleet, namespaces: &[String]) -> Result<Vec<(String, usize)>> {
    let mut out = Vec::new();
    for m in &fleet.members {
        let mut n = 0;
        for ns in namespaces {
            n += count_in(&m.client, ns)
                .await
                .with_context(|| format!("counting the Deployments in {}", m.name))?;
        }
        out.push((m.name.clone(), n));
    }
    Ok(out)
}

/// Delete the run's namespaces from the members that hold nothing of the run any more.
async fn remove_empty(
    fleet: &Fleet,
    namespaces: &[String],
    left: &[(String, usize)],
    progress: &Progress,
) {
    for (m, (_, n)) in fleet.members.iter().zip(left) {
        if *n > 0 {
            progress.note(&format!(
                "{}: {n} Deployments of this run are left in {}; kept for a look",
                m.name,
                namespaces.join(", ")
            ));
            continue;
        }
        let api: Api<Namespace> = Api::all(m.client.clone());
        for ns in namespaces {
            match api.delete(ns, &DeleteParams::default()).await {
                Ok(_) => {}
                Err(kube::Error::Api(s)) if s.code == 404 => {}
                Err(e) => progress.note(&format!(
                    "warning: could not delete the namespace {ns} in {}: {e}",
                    m.name
                )),
            }
        }
    }
}
