//! Fenced writes: a controller process that lost a lease must not write on its behalf.
//!
//! Controllers share their work by shard Leases in `flotilla-system` (no leader). A process
//! that stalls (a long pause, a partition) may still believe it owns a shard after its lease
//! expired and another process took it over; its late writes would then race the new owner's.
//! So a controller names the lease it writes under in a header,
//! `x-flotilla-fence: <lease name>=<holder identity>`, and the hub refuses a write (409
//! Conflict, nothing stored) unless that Lease is held by that identity and has not expired.
//! Requests without the header are not fenced; reads never are, nor writes of Leases (that is
//! how leases are renewed and taken over).
//!
//! The Lease is read from the watch cache made current first ([`Cache::sync_current`]), so a
//! takeover committed through any hub replica before the write arrived is seen. What remains is
//! the moment between this check and the write's commit, far shorter than a lease's duration,
//! which a process must let pass before it takes over an expired lease anyway.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use http::HeaderMap;
use k8s_openapi::api::coordination::v1::Lease;
use parking_lot::Mutex;

use crate::cache::{Cache, CachedObject};
use crate::error::{ApiError, Result};
use crate::request::RequestInfo;

/// The header a controller sends with the lease it writes under.
pub const HEADER: &str = "x-flotilla-fence";
/// Where fencing leases live.
pub const NAMESPACE: &str = "flotilla-system";

/// The fence a request names, if any: `(lease, holder)`. A malformed header is a 400.
pub fn parse(headers: &HeaderMap) -> Result<Option<(String, String)>> {
    let Some(value) = headers.get(HEADER) else {
        return Ok(None);
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::bad_request(format!("{HEADER} must be ASCII text")))?;
    match text.split_once('=') {
        Some((lease, holder)) if !lease.is_empty() && !holder.is_empty() => {
            Ok(Some((lease.to_owned(), holder.to_owned())))
        }
        _ => Err(ApiError::bad_request(format!(
            "{HEADER} must be LEASE=HOLDER (the Lease in {NAMESPACE} this write is made under, \
             and its holder identity), got {text:?}"
        ))),
    }
}

/// Whether `info` is a write the fence applies to.
fn fenced_verb(info: &RequestInfo) -> bool {
    let leases = info.group == "coordination.k8s.io" && info.resource == "leases";
    !leases
        && matches!(
            info.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection"
        )
}

/// Refuse the write unless `holder` holds `lease` now.
pub async fn check(
    cache: &Cache,
    info: &RequestInfo,
    fence: Option<&(String, String)>,
) -> Result<()> {
    let Some((lease, holder)) = fence else {
        return Ok(());
    };
    if !fenced_verb(info) {
        return Ok(());
    }
    cache.sync_current().await?;
    let key = format!("/registry/coordination.k8s.io/leases/{NAMESPACE}/{lease}");
    let current = cache.get(&key).and_then(|o| parsed(&key, o));
    let now = k8s_openapi::jiff::Timestamp::now();
    match judge(current.as_deref(), holder, now) {
        Ok(()) => Ok(()),
        Err(why) => {
            tracing::info!(lease, holder, why, path = %info.path, "fenced write refused");
            Err(ApiError::new(
                409,
                "Conflict",
                format!(
                    "write refused: this request is made under Lease {NAMESPACE}/{lease} for \
                     {holder:?}, but {why}; the process lost that lease and must stop working \
                     on its shard"
                ),
            ))
        }
    }
}

/// A cached Lease object and what it parses to.
type Parsed = (Arc<CachedObject>, Arc<Lease>);

/// The Lease `object` (the cache's copy at `key`), parsed once per version: every write of a
/// controller process names its lease, and they come hundreds a second while a lease changes
/// every few seconds. Known by the cached object itself (the same allocation is the same
/// version), so hubs sharing the process never see each other's.
fn parsed(key: &str, object: Arc<CachedObject>) -> Option<Arc<Lease>> {
    static PARSED: LazyLock<Mutex<HashMap<String, Parsed>>> = LazyLock::new(Mutex::default);
    if let Some((seen, lease)) = PARSED.lock().get(key) {
        if Arc::ptr_eq(seen, &object) {
            return Some(lease.clone());
        }
    }
    let lease = Arc::new(serde_json::from_value::<Lease>(object.value()).ok()?);
    PARSED
        .lock()
        .insert(key.to_owned(), (object, lease.clone()));
    Some(lease)
}

/// Whether `lease` is held by `holder` at `now`; why not otherwise.
pub(crate) fn judge(
    lease: Option<&Lease>,
    holder: &str,
    now: k8s_openapi::jiff::Timestamp,
) -> std::result::Result<(), String> {
    let Some(lease) = lease else {
        return Err("that Lease does not exist".into());
    };
    let spec = lease.spec.clone().unwrap_or_default();
    let current = spec.holder_identity.unwrap_or_default();
    if current != holder {
        return Err(if current.is_empty() {
            "nobody holds it".into()
        } else {
            format!("{current:?} holds it")
        });
    }
    let renewed = spec.renew_time.or(spec.acquire_time).map(|t| t.0);
    let duration = i64::from(spec.lease_duration_seconds.unwrap_or(0));
    let expires = renewed.and_then(|r| {
        r.checked_add(k8s_openapi::jiff::SignedDuration::from_secs(duration))
            .ok()
    });
    match expires {
        Some(e) if e > now => Ok(()),
        Some(e) => Err(format!("it expired at {e}")),
        None => Err("it has no renew time".into()),
    }
}

#[cfg(test)]
mod tests;
