//! The lease keeper: claims, renews and gives back the shard Leases of one process, and tells
//! its [`Shards`] handle what it owns.
//!
//! Every [`RENEW_EVERY`] a planning round renews the process's membership Lease (server-side
//! apply), lists the Leases of `flotilla-system`, and acts on [`plan::decide`]: shards over the
//! fair share are given back (the holder emptied), free or expired ones claimed. Each held
//! shard has a keeper of its own ([`keep`]) that renews its Lease every [`RENEW_EVERY`] from
//! the Lease as last written, without waiting for the round or the other shards. Writes to
//! shard Leases are updates carrying the resourceVersion read, so two processes never both win
//! one: a 409 on renewal re-reads the Lease, and another holder there means the shard is lost
//! at once. A shard whose renewals keep failing is dropped [`SAFETY`] before its Lease, stamped
//! with the time its renewal was sent, could expire for the others, by a timer independent of
//! the (possibly stuck) round and keepers; until then a renewal waits for its answer.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

use super::keeper::keep;
use super::plan::{self, holder, shard_of_lease};
use super::state::State;
#[cfg(doc)]
use super::writes::SAFETY;
use super::writes::{claim, give_back, lease, within, Failure, REQUEST_TIMEOUT};
use super::{lease_name, Shards, LEASE_LABEL, MEMBER_LEASE_PREFIX, NAMESPACE, RENEW_EVERY};
use crate::metrics::metrics;

/// Field manager of the membership Lease.
const MANAGER: &str = "flotilla-controllers";

/// One process's shard Leases, kept until [`Leases::release`] or drop (which stops renewing
/// and owning at once, leaving the Leases to expire).
///
/// The keeping runs on a runtime of its own (one thread, `flotilla-leases`), with a hub client
/// made there: a renewal is a few small requests every few seconds, and on a process whose
/// controllers saturate their runtime it would otherwise wait its turn behind them until the
/// shards lapse (with `serve`'s in-process client the hub's handler runs on the caller's task,
/// so the renewal is served on this thread too).
pub struct Leases {
    state: Arc<State>,
    hub: Client,
    runtime: Option<Runtime>,
    tasks: Vec<JoinHandle<()>>,
}

/// Why the lease keeper could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Its runtime (a thread) could not be made.
    #[error("starting the lease keeper's runtime: {0}")]
    Runtime(#[from] std::io::Error),
    /// Its hub client could not be made.
    #[error("a hub client for the lease keeper: {0}")]
    Client(Box<dyn std::error::Error + Send + Sync>),
}

/// The membership Lease of `identity`: `flotilla-controller-<identity>`, made a valid name.
pub fn member_lease_name(identity: &str) -> String {
    let clean: String = identity
        .to_ascii_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let clean = clean.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let mut name = format!("{MEMBER_LEASE_PREFIX}{clean}");
    name.truncate(253);
    name.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned()
}

impl Leases {
    /// Starts keeping the shard Leases for `identity` (in the background, first round at
    /// once) through the hub client `connect` makes (called on the keeper's runtime, so the
    /// client's background tasks run there), and returns the keeper and the handle the
    /// controllers read.
    pub fn start<E>(
        connect: impl FnOnce() -> Result<Client, E>,
        identity: &str,
    ) -> Result<(Leases, Shards), StartError>
    where
        E: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("flotilla-leases")
            .enable_all()
            .build()?;
        let hub = {
            let _on = runtime.enter();
            connect().map_err(|e| StartError::Client(e.into()))?
        };
        let (state, rx) = State::new(identity, member_lease_name(identity));
        let state = Arc::new(state);
        metrics().shards_owned(identity, 0);
        let rounds = runtime.spawn(rounds(hub.clone(), state.clone()));
        let expiry = runtime.spawn({
            let state = state.clone();
            async move { state.expire().await }
        });
        let leases = Leases {
            state,
            hub,
            runtime: Some(runtime),
            tasks: vec![rounds, expiry],
        };
        Ok((leases, Shards::new(identity, rx)))
    }

    /// Stops working every shard, gives the Leases back and removes the membership Lease,
    /// so the other processes take over at once (best effort, a few seconds at most).
    pub async fn release(mut self) {
        for t in self.tasks.drain(..) {
            t.abort();
        }
        let held = self.state.held();
        self.state.forget_all();
        for s in &held {
            metrics().shard_transition(&self.state.identity, "released");
            tracing::debug!(shard = s, "giving the shard back");
        }
        let api: Api<Lease> = Api::namespaced(self.hub.clone(), NAMESPACE);
        let state = self.state.clone();
        let work = async move {
            let leases = api
                .list(&ListParams::default().labels(LEASE_LABEL))
                .await?
                .items;
            let mine = leases.into_iter().filter(|l| {
                holder(l) == state.identity
                    && l.metadata
                        .name
                        .as_deref()
                        .and_then(shard_of_lease)
                        .is_some()
            });
            join_all(mine.map(|l| give_back(&api, l, &state.identity))).await;
            api.delete(&state.member_lease, &DeleteParams::default())
                .await
                .map(|_| ())
        };
        let work = tokio::time::timeout(Duration::from_secs(5), work);
        let Some(runtime) = self.runtime.as_ref() else {
            return;
        };
        match runtime.spawn(work).await {
            Ok(Ok(Ok(()))) => tracing::info!("shard Leases given back"),
            Ok(Ok(Err(e))) => tracing::warn!(error = %e, "giving the shard Leases back"),
            Ok(Err(_)) => tracing::warn!("giving the shard Leases back timed out"),
            Err(e) => tracing::warn!(error = %e, "giving the shard Leases back"),
        }
    }
}

impl Drop for Leases {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        self.state.forget_all();
        if let Some(runtime) = self.runtime.take() {
            // Dropped on an async task: the runtime's thread winds down in the background.
            runtime.shutdown_background();
        }
    }
}

async fn rounds(hub: Client, state: Arc<State>) {
    let api: Api<Lease> = Api::namespaced(hub.clone(), NAMESPACE);
    let mut tick = tokio::time::interval(RENEW_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut namespace_checked = false;
    loop {
        tick.tick().await;
        if !namespace_checked {
            namespace_checked = ensure_namespace(&hub).await;
        }
        if let Err(e) = round(&api, &state).await {
            tracing::warn!(error = %e, "shard Lease round");
        }
    }
}

/// Creates `flotilla-system` if it is missing (the hub creates it at start; a controller
/// process may come first). Whether it exists now.
async fn ensure_namespace(hub: &Client) -> bool {
    let api: Api<Namespace> = Api::all(hub.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some(NAMESPACE.into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    match api.create(&PostParams::default(), &ns).await {
        Ok(_) => true,
        Err(kube::Error::Api(s)) if s.code == 409 => true,
        Err(e) => {
            tracing::warn!(error = %e, "creating the namespace {NAMESPACE}");
            false
        }
    }
}

/// One planning round: renew the membership Lease, list the Leases, and act on
/// [`plan::decide`] (give back what is over the share, take what is free up to it). Held
/// shards are renewed by their keepers, not here.
async fn round(api: &Api<Lease>, state: &Arc<State>) -> Result<(), Failure> {
    let now = Timestamp::now();
    let member = lease(&state.member_lease, &state.identity, now);
    within(
        "renewing the membership Lease",
        REQUEST_TIMEOUT,
        api.patch(
            &state.member_lease,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&member),
        ),
    )
    .await?;
    let leases = within(
        "listing Leases",
        REQUEST_TIMEOUT,
        api.list(&ListParams::default().labels(LEASE_LABEL)),
    )
    .await?
    .items;
    let slots = plan::slots(&leases, &state.identity, now);
    // Held here but another's there (taken after a lapse): lost at once.
    for s in state.held() {
        if slots[s as usize] != plan::Slot::Mine && state.drop_shard(s, None).is_some() {
            metrics().shard_transition(&state.identity, "lost");
            tracing::warn!(shard = s, "another process holds the shard now");
        }
    }
    let live = plan::live_members(&leases, &state.member_lease, now);
    for gone in plan::departed(&leases, now) {
        let name = gone.metadata.name.clone().unwrap_or_default();
        let precondition = DeleteParams {
            preconditions: Some(kube::api::Preconditions {
                resource_version: gone.metadata.resource_version.clone(),
                uid: gone.metadata.uid.clone(),
            }),
            ..DeleteParams::default()
        };
        if within(
            "deleting a departed process's Lease",
            REQUEST_TIMEOUT,
            api.delete(&name, &precondition),
        )
        .await
        .is_ok()
        {
            tracing::info!(lease = %name, "removed the membership Lease of a departed process");
        }
    }
    let decision = plan::decide(&slots, live, &state.identity);
    let listed = |s: u32| {
        leases
            .iter()
            .find(|l| l.metadata.name.as_deref() == Some(&lease_name(s)))
            .cloned()
    };
    // Give back first: stop working, then write (the Lease as last written here, else as
    // listed).
    let mut given = Vec::new();
    for s in &decision.release {
        let written = state.drop_shard(*s, None);
        if written.is_some() {
            metrics().shard_transition(&state.identity, "released");
        }
        given.extend(written.or_else(|| listed(*s)));
    }
    state.publish();
    if !decision.release.is_empty() {
        tracing::info!(shards = ?decision.release, live, "giving shards back to rebalance");
    }
    join_all(
        given
            .into_iter()
            .map(|l| give_back(api, l, &state.identity)),
    )
    .await;
    // Taken: the free ones, and this process's own that it stopped working (a renewal that
    // was answered after the shard's deadline).
    let take = decision
        .claim
        .iter()
        .chain(decision.renew.iter().filter(|s| !state.holds(**s)));
    let claims = join_all(take.map(|s| async move {
        let r = claim(api, *s, listed(*s), &state.identity).await;
        (*s, r)
    }))
    .await;
    for (s, r) in claims {
        match r {
            Ok(Some((lease, until))) => {
                let epoch = state.take(s, lease, until);
                tokio::spawn(keep(api.clone(), state.clone(), s, epoch, until));
            }
            Ok(None) => tracing::debug!(shard = s, "another process claimed the shard first"),
            Err(e) => tracing::warn!(shard = s, error = %e, "claiming a shard Lease"),
        }
    }
    state.publish();
    Ok(())
}
