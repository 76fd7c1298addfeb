//! The RBAC objects of the watch cache as one [`Policy`] snapshot, shared by every request.
//!
//! Decoding every Role and binding on every request would cost more than the decision itself,
//! and so would rebuilding the whole policy on every RBAC write (a thousand clusters joining
//! write eight thousand Roles and bindings: rebuilt each time, that was quadratic and kept the
//! hub busy for minutes). The snapshot is built once from the cache, then kept up to date from
//! the cache's feed of RBAC changes: each request first takes the changes sent since the last
//! one (none, almost always: no scan, no decoding) and applies them to the snapshot, copying it
//! only while an earlier request still holds it. A change is sent under the cache's lock
//! before the write that made it is answered, so a request always sees every RBAC write the
//! cache has applied: `kubectl create rolebinding` followed at once by a request it allows
//! works. A snapshot that fell behind the feed's buffer is built again from the cache.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::broadcast::error::TryRecvError;
use tokio::sync::broadcast::Receiver;

use crate::auth::Policy;
use crate::cache::{Cache, Change, ChangeKind};

/// Where Roles, ClusterRoles, RoleBindings and ClusterRoleBindings are stored.
const RBAC_PREFIX: &str = "/registry/rbac.authorization.k8s.io/";

/// The snapshot, and the feed of the changes made after it.
struct Current {
    policy: Arc<Policy>,
    live: Receiver<Arc<Change>>,
}

/// The current snapshot, made on the first request.
#[derive(Default)]
pub(super) struct CachePolicy {
    current: Mutex<Option<Current>>,
}

// === impl CachePolicy ===

impl std::fmt::Debug for CachePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // How many objects, not every role and binding.
        let objects = self.current.lock().as_ref().map(|c| c.policy.len());
        f.debug_struct("CachePolicy")
            .field("objects", &objects)
            .finish()
    }
}

impl CachePolicy {
    /// The policy as of the cache's current state.
    pub(super) fn snapshot(&self, cache: &Cache) -> Arc<Policy> {
        let mut current = self.current.lock();
        loop {
            let Some(now) = current.as_mut() else {
                *current = Some(build(cache));
                continue;
            };
            match now.live.try_recv() {
                Ok(change) => apply(Arc::make_mut(&mut now.policy), &change),
                Err(TryRecvError::Empty) => return now.policy.clone(),
                Err(TryRecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "RBAC changes missed; rebuilding the policy");
                    *current = None;
                }
                Err(TryRecvError::Closed) => *current = None,
            }
        }
    }
}

/// The policy of every RBAC object in the cache, and the feed of what changes after them.
fn build(cache: &Cache) -> Current {
    let subscription = cache
        .subscribe(RBAC_PREFIX, None)
        .expect("a subscription from now is always possible");
    let mut policy = Policy::new();
    for change in &subscription.replay {
        apply(&mut policy, change);
    }
    tracing::debug!(objects = policy.len(), "RBAC policy built");
    Current {
        policy: Arc::new(policy),
        live: subscription.live,
    }
}

fn apply(policy: &mut Policy, change: &Change) {
    let object = change.object.value();
    if change.kind == ChangeKind::Deleted {
        policy.remove_object(&object);
        return;
    }
    if let Err(e) = policy.apply(&object) {
        // Stored objects passed validation; one that still does not decode is left out (it
        // grants nothing, its previous version neither) rather than failing every request.
        policy.remove_object(&object);
        tracing::warn!(key = %change.object.key, error = %e, "RBAC object ignored");
    }
}

#[cfg(test)]
mod tests;
