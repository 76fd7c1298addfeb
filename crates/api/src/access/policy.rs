//! The RBAC objects of the watch cache as one [`Policy`] snapshot, shared by every request.
//!
//! Decoding every Role and binding on every request would cost more than the decision itself,
//! so the snapshot is kept and rebuilt only when the RBAC objects change. Whether they changed is
//! read from the cache on each request without decoding anything: how many objects there are
//! under the RBAC prefix and the newest `mod_revision` among them. Any write raises the newest
//! revision above every earlier one, and deletions alone lower the count, so two different sets
//! never share a fingerprint. A request therefore always sees every RBAC write the cache has
//! applied — `kubectl create rolebinding` followed at once by a request it allows works.

use std::sync::Arc;

use flotilla_store::Revision;
use parking_lot::Mutex;

use crate::auth::Policy;
use crate::cache::{Cache, CachedObject};

/// Where Roles, ClusterRoles, RoleBindings and ClusterRoleBindings are stored.
const RBAC_PREFIX: &str = "/registry/rbac.authorization.k8s.io/";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Fingerprint {
    count: usize,
    newest: Revision,
}

impl Fingerprint {
    fn add(&mut self, o: &CachedObject) {
        self.count += 1;
        self.newest = self.newest.max(o.mod_revision);
    }
}

/// The current snapshot and the fingerprint of the objects it was built from.
#[derive(Default)]
pub(super) struct CachePolicy {
    current: Mutex<Option<(Fingerprint, Arc<Policy>)>>,
}

// === impl CachePolicy ===

impl std::fmt::Debug for CachePolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The fingerprint, not every role and binding.
        let fingerprint = self.current.lock().as_ref().map(|(fp, _)| *fp);
        f.debug_struct("CachePolicy")
            .field("fingerprint", &fingerprint)
            .finish()
    }
}

impl CachePolicy {
    /// The policy as of the cache's current state.
    pub(super) fn snapshot(&self, cache: &Cache) -> Arc<Policy> {
        let mut now = Fingerprint::default();
        cache.list(RBAC_PREFIX, None, None, |o| {
            now.add(o);
            false
        });
        if let Some((seen, policy)) = &*self.current.lock() {
            if *seen == now {
                return policy.clone();
            }
        }
        // Fingerprint what is actually decoded: the cache may have moved on since the scan.
        let (objects, _, _) = cache.list(RBAC_PREFIX, None, None, |_| true);
        let mut built = Fingerprint::default();
        let mut policy = Policy::new();
        for o in &objects {
            built.add(o);
            if let Err(e) = policy.apply(&o.value()) {
                // Stored objects passed validation; one that still does not decode is left out
                // (it grants nothing) rather than failing every request.
                tracing::warn!(key = %o.key, error = %e, "RBAC object ignored");
            }
        }
        tracing::debug!(objects = objects.len(), "RBAC policy rebuilt");
        let policy = Arc::new(policy);
        *self.current.lock() = Some((built, policy.clone()));
        policy
    }
}

#[cfg(test)]
mod tests;
