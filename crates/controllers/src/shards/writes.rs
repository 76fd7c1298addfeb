//! The lease keeper's writes to shard Leases: claim, renew, give back; each an update on the
//! resourceVersion read, so two processes never both win one.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::Api;
use tokio::time::Instant;

use super::leases::{within, Failure, SAFETY};
use super::{lease_name, LEASE_DURATION, NAMESPACE};

pub(super) fn holder(l: &Lease) -> &str {
    l.spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .unwrap_or_default()
}

/// A Lease named `name` held by `identity`, renewed `now`.
pub(super) fn lease(name: &str, identity: &str, now: Timestamp) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NAMESPACE.into()),
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
pub(super) fn stamp() -> (Timestamp, Instant) {
    (Timestamp::now(), Instant::now() + LEASE_DURATION - SAFETY)
}

/// Renews a held shard Lease (an update on the resourceVersion read; on 409 read again and
/// retry once if it is still ours). `Ok(Some(until))`: held until then; `Ok(None)`: another
/// process holds it now.
pub(super) async fn renew(
    api: &Api<Lease>,
    mut current: Lease,
    identity: &str,
) -> Result<Option<Instant>, Failure> {
    let name = current.metadata.name.clone().unwrap_or_default();
    let mut last = None;
    for _ in 0..2 {
        let (now, until) = stamp();
        let spec = current.spec.get_or_insert_with(LeaseSpec::default);
        spec.renew_time = Some(MicroTime(now));
        spec.lease_duration_seconds = Some(LEASE_DURATION.as_secs() as i32);
        let params = PostParams::default();
        let replaced = within(
            "renewing a shard Lease",
            api.replace(&name, &params, &current),
        )
        .await;
        match replaced {
            Ok(_) => return Ok(Some(until)),
            Err(e) if e.conflict => {
                current = within("re-reading a shard Lease", api.get(&name)).await?;
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

/// Takes shard `shard`: creates its Lease, or updates the free one read (its
/// resourceVersion as precondition). `Ok(Some(until))`: held until then; `Ok(None)`: another
/// process was first.
pub(super) async fn claim(
    api: &Api<Lease>,
    shard: u32,
    current: Option<Lease>,
    identity: &str,
) -> Result<Option<Instant>, Failure> {
    let name = lease_name(shard);
    let (now, until) = stamp();
    let result = match current {
        None => {
            within(
                "creating a shard Lease",
                api.create(&PostParams::default(), &lease(&name, identity, now)),
            )
            .await
        }
        Some(mut l) => {
            let spec = l.spec.get_or_insert_with(LeaseSpec::default);
            let moved = spec.holder_identity.as_deref() != Some(identity);
            spec.holder_identity = Some(identity.into());
            spec.lease_duration_seconds = Some(LEASE_DURATION.as_secs() as i32);
            spec.acquire_time = Some(MicroTime(now));
            spec.renew_time = Some(MicroTime(now));
            if moved {
                spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
            }
            within(
                "taking a shard Lease",
                api.replace(&name, &PostParams::default(), &l),
            )
            .await
        }
    };
    match result {
        Ok(_) => Ok(Some(until)),
        Err(e) if e.conflict => Ok(None),
        Err(e) => Err(e),
    }
}

/// Empties the holder of a shard Lease this process gives back (best effort: it lapses
/// anyway).
pub(super) async fn give_back(api: &Api<Lease>, mut l: Lease) {
    let name = l.metadata.name.clone().unwrap_or_default();
    if let Some(spec) = l.spec.as_mut() {
        spec.holder_identity = None;
    }
    if let Err(e) = within(
        "giving a shard Lease back",
        api.replace(&name, &PostParams::default(), &l),
    )
    .await
    {
        tracing::debug!(lease = %name, error = %e, "giving a shard Lease back");
    }
}
