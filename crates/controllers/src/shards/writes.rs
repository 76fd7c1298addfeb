//! The lease keeper's writes to shard Leases: claim, renew, give back; each an update on the
//! resourceVersion read, so two processes never both win one.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::Api;
use tokio::time::Instant;

use super::plan::holder;
use super::{lease_name, LEASE_DURATION, LEASE_LABEL, NAMESPACE, SHARD_LEASE_PREFIX};

/// A shard is dropped this long before its Lease, last renewed when the renewal was sent,
/// could expire for the other processes (their clocks, the request's latency).
pub const SAFETY: Duration = Duration::from_secs(2);
/// The longest a Lease request other than a renewal may take before the keeper moves on.
pub(super) const REQUEST_TIMEOUT: Duration = Duration::from_secs(3);

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

/// `f`, given at most `wait`.
pub(super) async fn within<T>(
    what: &str,
    wait: Duration,
    f: impl std::future::Future<Output = kube::Result<T>>,
) -> Result<T, Failure> {
    match tokio::time::timeout(wait, f).await {
        Ok(Ok(t)) => Ok(t),
        Ok(Err(e)) => Err(Failure {
            conflict: matches!(&e, kube::Error::Api(s) if s.code == 409),
            message: format!("{what}: {e}"),
        }),
        Err(_) => Err(Failure {
            conflict: false,
            message: format!("{what}: no answer in {wait:?}"),
        }),
    }
}

/// A Lease named `name` held by `identity`, renewed `now`.
pub(super) fn lease(name: &str, identity: &str, now: Timestamp) -> Lease {
    let role = if name.starts_with(SHARD_LEASE_PREFIX) {
        "shard"
    } else {
        "member"
    };
    Lease {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NAMESPACE.into()),
            labels: Some([(LEASE_LABEL.to_string(), role.to_string())].into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(identity.into()),
            lease_duration_seconds: Some(LEASE_DURATION.as_secs() as i32),
            acquire_time: Some(MicroTime(now)),
            renew_time: Some(MicroTime(now)),
            lease_transitions: Some(0),
            ..LeaseSpec::default()
        }),
    }
}

/// The wall-clock time written into a Lease as it is sent, and until when this process may
/// work the shard if the write succeeds.
fn stamp() -> (Timestamp, Instant) {
    (Timestamp::now(), Instant::now() + LEASE_DURATION - SAFETY)
}

/// A shard Lease this process wrote, as the hub answered, and until when the process may
/// work the shard.
pub(super) type Held = (Lease, Instant);

/// Renews a held shard Lease (an update on the resourceVersion of `current`, the Lease as this
/// process last wrote or read it; on 409 read again and retry while it is still ours), trying
/// until `deadline`: a renewal answered late still helps as long as the shard is held, so it
/// is not cut off before. `Ok(Some(_))`: held longer; `Ok(None)`: another process holds it
/// now (or nobody, after a give-back).
pub(super) async fn renew(
    api: &Api<Lease>,
    mut current: Lease,
    identity: &str,
    deadline: Instant,
) -> Result<Option<Held>, Failure> {
    let name = current.metadata.name.clone().unwrap_or_default();
    let left = || deadline.saturating_duration_since(Instant::now());
    let mut last = None;
    for _ in 0..3 {
        let (now, until) = stamp();
        let spec = current.spec.get_or_insert_with(LeaseSpec::default);
        spec.renew_time = Some(MicroTime(now));
        spec.lease_duration_seconds = Some(LEASE_DURATION.as_secs() as i32);
        let params = PostParams::default();
        let replaced = within(
            "renewing a shard Lease",
            left(),
            api.replace(&name, &params, &current),
        )
        .await;
        match replaced {
            Ok(written) => return Ok(Some((written, until))),
            Err(e) if e.conflict => {
                current = within("re-reading a shard Lease", left(), api.get(&name)).await?;
                if holder(&current) != identity {
                    return Ok(None);
                }
                last = Some(e);
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(Failure {
        conflict: true,
        message: format!("renewing {name}: it keeps changing"),
    }))
}

/// Takes shard `shard`: creates its Lease, or updates the one read (its resourceVersion as
/// precondition; free, lapsed, or still this process's). `Ok(Some(_))`: held; `Ok(None)`:
/// another process was first.
pub(super) async fn claim(
    api: &Api<Lease>,
    shard: u32,
    current: Option<Lease>,
    identity: &str,
) -> Result<Option<Held>, Failure> {
    let name = lease_name(shard);
    let (now, until) = stamp();
    let result = match current {
        None => {
            let created = within(
                "creating a shard Lease",
                REQUEST_TIMEOUT,
                api.create(&PostParams::default(), &lease(&name, identity, now)),
            )
            .await;
            if created.as_ref().is_err_and(|e| e.conflict) {
                adopt(api, &name).await;
            }
            created
        }
        Some(mut l) => {
            let spec = l.spec.get_or_insert_with(LeaseSpec::default);
            let moved = spec.holder_identity.as_deref() != Some(identity);
            spec.holder_identity = Some(identity.into());
            spec.lease_duration_seconds = Some(LEASE_DURATION.as_secs() as i32);
            if moved {
                spec.acquire_time = Some(MicroTime(now));
                spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
            }
            spec.renew_time = Some(MicroTime(now));
            within(
                "taking a shard Lease",
                REQUEST_TIMEOUT,
                api.replace(&name, &PostParams::default(), &l),
            )
            .await
        }
    };
    match result {
        Ok(written) => Ok(Some((written, until))),
        Err(e) if e.conflict => Ok(None),
        Err(e) => Err(e),
    }
}

/// A shard Lease that exists but was not listed lacks [`LEASE_LABEL`] (written by a version
/// that did not label them): labelled here, holder untouched, so the next round sees it.
async fn adopt(api: &Api<Lease>, name: &str) {
    let Ok(mut l) = api.get(name).await else {
        return;
    };
    let labels = l.metadata.labels.get_or_insert_with(Default::default);
    if labels.contains_key(LEASE_LABEL) {
        return;
    }
    labels.insert(LEASE_LABEL.into(), "shard".into());
    match api.replace(name, &PostParams::default(), &l).await {
        Ok(_) => tracing::info!(
            lease = name,
            "labelled a shard Lease written without its label"
        ),
        Err(e) => tracing::debug!(lease = name, error = %e, "labelling a shard Lease"),
    }
}

/// Empties the holder of a shard Lease this process gives back (best effort: it lapses
/// anyway). On 409 (a renewal of its own landed first) it reads the Lease again and retries
/// while the Lease is still this process's.
pub(super) async fn give_back(api: &Api<Lease>, mut l: Lease, identity: &str) {
    let name = l.metadata.name.clone().unwrap_or_default();
    for _ in 0..2 {
        if let Some(spec) = l.spec.as_mut() {
            spec.holder_identity = None;
        }
        let replaced = within(
            "giving a shard Lease back",
            REQUEST_TIMEOUT,
            api.replace(&name, &PostParams::default(), &l),
        )
        .await;
        match replaced {
            Ok(_) => return,
            Err(e) if e.conflict => {
                match within("re-reading a shard Lease", REQUEST_TIMEOUT, api.get(&name)).await {
                    Ok(current) if holder(&current) == identity => l = current,
                    _ => return,
                }
            }
            Err(e) => {
                tracing::debug!(lease = %name, error = %e, "giving a shard Lease back");
                return;
            }
        }
    }
}
