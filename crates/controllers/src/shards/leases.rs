//! The lease keeper: claims, renews and gives back the shard Leases of one process, and tells
//! its [`Shards`] handle what it owns.
//!
//! Every [`RENEW_EVERY`] a round renews the process's membership Lease (server-side apply),
//! lists the Leases of `flotilla-system`, and acts on [`plan::decide`]: shards over the fair
//! share are given back (the holder emptied), held ones renewed, free or expired ones claimed.
//! Writes to shard Leases are updates carrying the resourceVersion read, so two processes
//! never both win one: a 409 on renewal re-reads the Lease, and another holder there means the
//! shard is lost at once. A shard whose renewals keep failing is dropped [`SAFETY`] before its
//! Lease, stamped with the time its renewal was sent, could expire for the others, by a timer
//! independent of the (possibly stuck) round.

use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use parking_lot::Mutex;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::plan::{self, shard_of_lease};
use super::writes::{claim, give_back, holder, lease, renew};
use super::{lease_name, Owned, Shards, MEMBER_LEASE_PREFIX, NAMESPACE, RENEW_EVERY, SHARDS};
use crate::metrics::metrics;

/// A shard is dropped this long before its Lease, last renewed when the renewal was sent,
/// could expire for the other processes (their clocks, the request's latency).
pub const SAFETY: Duration = Duration::from_secs(2);
/// The longest one Lease request may take before the round moves on.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);
/// Field manager of the membership Lease.
const MANAGER: &str = "flotilla-controllers";

/// One process's shard Leases, kept until [`Leases::release`] or drop (which stops renewing
/// and owning at once, leaving the Leases to expire).
pub struct Leases {
    state: Arc<State>,
    hub: Client,
    tasks: Vec<JoinHandle<()>>,
}

struct State {
    identity: String,
    member_lease: String,
    /// Per shard, until when this process may work it.
    held: Mutex<[Option<Instant>; SHARDS as usize]>,
    deadlines_moved: Notify,
    owned: watch::Sender<Owned>,
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
    /// Starts keeping the shard Leases for `identity` through `hub` (in the background, first
    /// round at once), and returns the keeper and the handle the controllers read.
    pub fn start(hub: Client, identity: &str) -> (Leases, Shards) {
        let (owned, rx) = watch::channel(Owned::NONE);
        let state = Arc::new(State {
            identity: identity.to_owned(),
            member_lease: member_lease_name(identity),
            held: Mutex::new([None; SHARDS as usize]),
            deadlines_moved: Notify::new(),
            owned,
        });
        metrics().shards_owned(identity, 0);
        let rounds = tokio::spawn(rounds(hub.clone(), state.clone()));
        let expiry = tokio::spawn(expiry(state.clone()));
        let leases = Leases {
            state,
            hub,
            tasks: vec![rounds, expiry],
        };
        (leases, Shards::new(identity, rx))
    }

    /// Stops working every shard, gives the Leases back and removes the membership Lease,
    /// so the other processes take over at once (best effort, a few seconds at most).
    pub async fn release(mut self) {
        for t in self.tasks.drain(..) {
            t.abort();
        }
        let held: Vec<u32> = (0..SHARDS).filter(|s| self.state.drop_shard(*s)).collect();
        self.state.publish();
        for s in &held {
            metrics().shard_transition(&self.state.identity, "released");
            tracing::debug!(shard = s, "giving the shard back");
        }
        let api: Api<Lease> = Api::namespaced(self.hub.clone(), NAMESPACE);
        let work = async {
            let leases = api.list(&ListParams::default()).await?.items;
            let mine = leases.into_iter().filter(|l| {
                holder(l) == self.state.identity
                    && l.metadata
                        .name
                        .as_deref()
                        .and_then(shard_of_lease)
                        .is_some()
            });
            join_all(mine.map(|l| give_back(&api, l))).await;
            api.delete(&self.state.member_lease, &DeleteParams::default())
                .await
                .map(|_| ())
        };
        match tokio::time::timeout(Duration::from_secs(5), work).await {
            Ok(Ok(())) => tracing::info!("shard Leases given back"),
            Ok(Err(e)) => tracing::warn!(error = %e, "giving the shard Leases back"),
            Err(_) => tracing::warn!("giving the shard Leases back timed out"),
        }
    }
}

impl Drop for Leases {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        self.state.owned.send_replace(Owned::NONE);
        metrics().shards_owned(&self.state.identity, 0);
    }
}

impl State {
    /// Publishes the shards whose deadline has not passed (and forgets the others: lost).
    fn publish(&self) {
        let now = Instant::now();
        let mut lost = Vec::new();
        let owned: Owned = {
            let mut held = self.held.lock();
            for (s, d) in held.iter_mut().enumerate() {
                if d.is_some_and(|d| d <= now) {
                    *d = None;
                    lost.push(s);
                }
            }
            (0..SHARDS)
                .filter(|s| held[*s as usize].is_some())
                .collect()
        };
        for s in lost {
            metrics().shard_transition(&self.identity, "lost");
            tracing::warn!(
                shard = s,
                "shard Lease not renewed in time: stopped working it"
            );
        }
        let changed = self.owned.send_if_modified(|o| {
            let changed = *o != owned;
            *o = owned;
            changed
        });
        if changed {
            metrics().shards_owned(&self.identity, owned.len());
            tracing::info!(shards = ?owned.iter().collect::<Vec<_>>(), "owned shards changed");
        }
    }

    /// Holds `shard` until `deadline`; counts an acquisition when it was not held.
    fn hold(&self, shard: u32, deadline: Instant) {
        let before = self.held.lock()[shard as usize].replace(deadline);
        if before.is_none() {
            metrics().shard_transition(&self.identity, "acquired");
        }
        self.deadlines_moved.notify_one();
    }

    /// Stops holding `shard`; whether it was held.
    fn drop_shard(&self, shard: u32) -> bool {
        self.held.lock()[shard as usize].take().is_some()
    }

    fn held(&self) -> Vec<u32> {
        let held = self.held.lock();
        (0..SHARDS)
            .filter(|s| held[*s as usize].is_some())
            .collect()
    }

    fn earliest(&self) -> Option<Instant> {
        self.held.lock().iter().flatten().min().copied()
    }
}

/// Drops shards at their deadlines, whatever the rounds are doing.
async fn expiry(state: Arc<State>) {
    loop {
        let wake = state
            .earliest()
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
        tokio::select! {
            _ = tokio::time::sleep_until(wake) => {}
            _ = state.deadlines_moved.notified() => {}
        }
        state.publish();
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

/// A Lease request that failed: refused with 409 (`conflict`: another writer was first), or
/// any other error.
#[derive(Debug)]
pub(super) struct Failure {
    pub(super) conflict: bool,
    pub(super) message: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// `f`, at most [`REQUEST_TIMEOUT`].
pub(super) async fn within<T>(
    what: &str,
    f: impl std::future::Future<Output = kube::Result<T>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(REQUEST_TIMEOUT, f).await {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(Failure {
            conflict: matches!(&e, kube::Error::Api(s) if s.code == 409),
            message: format!("{what}: {e}"),
        }),
        Err(_) => Err(Failure {
            conflict: false,
            message: format!("{what}: no answer in {REQUEST_TIMEOUT:?}"),
        }),
    }
}

async fn round(api: &Api<Lease>, state: &State) -> Result<(), Failure> {
    let now = Timestamp::now();
    let member = lease(&state.member_lease, &state.identity, now);
    within(
        "renewing the membership Lease",
        api.patch(
            &state.member_lease,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&member),
        ),
    )
    .await?;
    let leases = within("listing Leases", api.list(&ListParams::default()))
        .await?
        .items;
    let slots = plan::slots(&leases, &state.identity, now);
    // Held here but another's there (taken after a lapse): lost at once.
    for s in state.held() {
        if slots[s as usize] != plan::Slot::Mine && state.drop_shard(s) {
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
            api.delete(&name, &precondition),
        )
        .await
        .is_ok()
        {
            tracing::info!(lease = %name, "removed the membership Lease of a departed process");
        }
    }
    let decision = plan::decide(&slots, live, &state.identity);
    let by_shard = |s: u32| {
        leases
            .iter()
            .find(|l| l.metadata.name.as_deref() == Some(&lease_name(s)))
            .cloned()
    };
    // Give back first: stop working, then write.
    for s in &decision.release {
        if state.drop_shard(*s) {
            metrics().shard_transition(&state.identity, "released");
        }
    }
    state.publish();
    if !decision.release.is_empty() {
        tracing::info!(shards = ?decision.release, live, "giving shards back to rebalance");
    }
    join_all(
        decision
            .release
            .iter()
            .filter_map(|s| by_shard(*s))
            .map(|l| give_back(api, l)),
    )
    .await;
    let renewals = join_all(decision.renew.iter().map(|s| async move {
        let r = renew(api, by_shard(*s)?, &state.identity).await;
        Some((*s, r))
    }))
    .await;
    for (s, r) in renewals.into_iter().flatten() {
        match r {
            Ok(Some(deadline)) => state.hold(s, deadline),
            Ok(None) => {
                if state.drop_shard(s) {
                    metrics().shard_transition(&state.identity, "lost");
                    tracing::warn!(shard = s, "another process took the shard");
                }
            }
            Err(e) => tracing::warn!(shard = s, error = %e, "renewing a shard Lease"),
        }
    }
    let claims = join_all(decision.claim.iter().map(|s| async move {
        let r = claim(api, *s, by_shard(*s), &state.identity).await;
        (*s, r)
    }))
    .await;
    for (s, r) in claims {
        match r {
            Ok(Some(deadline)) => state.hold(s, deadline),
            Ok(None) => tracing::debug!(shard = s, "another process claimed the shard first"),
            Err(e) => tracing::warn!(shard = s, error = %e, "claiming a shard Lease"),
        }
    }
    state.publish();
    Ok(())
}
