//! Ending what a credential opened, once the credential stops being valid.
//!
//! kube-apiserver judges a token only when a request arrives, so a watch opened with a token
//! outlives the token's revocation for as long as the watch lasts (up to an hour). The hub
//! promises more: a watch ends within moments of its credential dying — its service account or
//! the Secret it is bound to deleted (which is how `flotilla cluster remove` revokes an agent),
//! its bootstrap token Secret deleted or changed, or its expiry passing.
//!
//! Every authenticated request carries a [`Credential`]: the stored objects it depends on (with
//! the uid, and for bootstrap tokens the exact version, they must keep) and when it expires.
//! [`Revocations::until_revoked`] turns it into a future that completes when the credential
//! dies. Cheap for many watches: each dependency is one shared signal (a `tokio` watch channel)
//! in one map, so a thousand watches of one agent share one entry; one task follows the watch
//! cache and looks each change's key up in that map; expiry is a timer per watch.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Weak};
use std::time::Duration;

use flotilla_store::Revision;
use parking_lot::Mutex;
use tokio::sync::{broadcast::error::RecvError, watch};

use crate::auth::token::{ServiceAccountClaims, LEEWAY_SECONDS};
use crate::cache::{Cache, CachedObject};

/// What a credential depends on to stay valid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Credential {
    /// Unix seconds after which the credential no longer authenticates; `None`: never expires.
    expires_after: Option<i64>,
    depends_on: Vec<Dependency>,
}

/// A stored object the credential dies with.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Dependency {
    /// Its storage key.
    key: String,
    /// The uid it must keep (a re-created object is another object); `None`: any.
    uid: Option<String>,
    /// The exact version it must keep, for credentials whose object *is* their definition
    /// (a bootstrap token's Secret: any change may have revoked it).
    revision: Option<Revision>,
}

// === impl Credential ===

impl Credential {
    /// A credential nothing stored can revoke (the admin token).
    pub fn permanent() -> Self {
        Credential::default()
    }

    /// A service-account token: it dies with its service account, with the object it is bound
    /// to, and at its expiry (plus the clock-skew leeway verification allows).
    pub fn service_account(claims: &ServiceAccountClaims) -> Self {
        let k = &claims.kubernetes;
        let ns = &k.namespace;
        let dep = |key: String, uid: &str| Dependency {
            key,
            uid: Some(uid.to_string()),
            revision: None,
        };
        let sa = &k.service_account;
        let mut depends_on = vec![dep(
            format!("/registry/core/serviceaccounts/{ns}/{}", sa.name),
            &sa.uid,
        )];
        if let Some(s) = &k.secret {
            depends_on.push(dep(
                format!("/registry/core/secrets/{ns}/{}", s.name),
                &s.uid,
            ));
        }
        if let Some(p) = &k.pod {
            depends_on.push(dep(format!("/registry/core/pods/{ns}/{}", p.name), &p.uid));
        }
        if let Some(n) = &k.node {
            // A pod-bound token names its pod's node, with a uid only when it was known.
            let mut node = dep(format!("/registry/core/nodes/{}", n.name), &n.uid);
            node.uid = node.uid.filter(|u| !u.is_empty());
            depends_on.push(node);
        }
        Credential {
            expires_after: Some(claims.expires_at.saturating_add(LEEWAY_SECONDS)),
            depends_on,
        }
    }

    /// A bootstrap token, defined by its Secret as it is now: deleting or changing that Secret
    /// (the token cleaner deletes it once expired) ends what the token opened.
    pub fn bootstrap(secret: &CachedObject) -> Self {
        Credential {
            expires_after: None,
            depends_on: vec![Dependency {
                key: secret.key.clone(),
                uid: Some(uid_of(secret).unwrap_or_default()),
                revision: Some(secret.mod_revision),
            }],
        }
    }

    /// Does everything the credential depends on still hold in `cache`? Returns the key of what
    /// is gone or replaced.
    pub fn check(&self, cache: &Cache) -> Result<(), String> {
        for dep in &self.depends_on {
            if !dep.holds(cache.get(&dep.key).as_deref()) {
                return Err(dep.key.clone());
            }
        }
        Ok(())
    }
}

// === impl Dependency ===

impl Dependency {
    fn holds(&self, object: Option<&CachedObject>) -> bool {
        let Some(object) = object else {
            return false;
        };
        if self.revision.is_some_and(|r| r != object.mod_revision) {
            return false;
        }
        self.uid.is_none() || uid_of(object) == self.uid
    }
}

/// `metadata.uid`, decoding nothing else.
fn uid_of(object: &CachedObject) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Head {
        metadata: Meta,
    }
    #[derive(serde::Deserialize)]
    struct Meta {
        uid: Option<String>,
    }
    serde_json::from_slice::<Head>(&object.raw())
        .ok()
        .and_then(|h| h.metadata.uid)
}

/// Storage key → the live signals of the dependencies on it (by uid and revision).
type Registry = Mutex<HashMap<String, HashMap<Identity, Weak<Tracked>>>>;

/// A dependency within its key: the uid and version it must keep.
type Identity = (Option<String>, Option<Revision>);

/// One dependency somebody waits on, shared by every waiter on it.
struct Tracked {
    dep: Dependency,
    /// `true` once the dependency no longer holds.
    revoked: watch::Sender<bool>,
    registry: Weak<Registry>,
}

impl Tracked {
    fn revoke(&self) {
        self.revoked.send_replace(true);
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        // The last waiter is gone: forget the entry (unless a new one already replaced it).
        let Some(registry) = self.registry.upgrade() else {
            return;
        };
        let mut map = registry.lock();
        if let Some(by_uid) = map.get_mut(&self.dep.key) {
            let id = (self.dep.uid.clone(), self.dep.revision);
            if by_uid.get(&id).is_some_and(|w| w.strong_count() == 0) {
                by_uid.remove(&id);
            }
            if by_uid.is_empty() {
                map.remove(&self.dep.key);
            }
        }
    }
}

/// The credentials long-lived requests wait on, and the task that revokes them.
#[derive(Default)]
pub struct Revocations {
    registry: Arc<Registry>,
}

impl std::fmt::Debug for Revocations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Revocations")
            .field("keys", &self.registry.lock().len())
            .finish()
    }
}

// === impl Revocations ===

impl Revocations {
    /// Follow `cache` and revoke what its changes invalidate, until the cache closes.
    pub fn start(&self, cache: Arc<Cache>) {
        let registry = self.registry.clone();
        tokio::spawn(async move { follow(&registry, &cache).await });
    }

    /// Completes when `credential` stops being valid: at once if it already has.
    pub fn until_revoked(
        &self,
        cache: &Cache,
        credential: &Credential,
    ) -> impl Future<Output = ()> + Send + 'static {
        let tracked: Vec<Arc<Tracked>> = credential
            .depends_on
            .iter()
            .map(|d| self.track(d))
            .collect();
        // Checked after registering: a change the follower handled before it could see the
        // registration is already in the cache, so one of the two sees every change.
        for t in &tracked {
            if !t.dep.holds(cache.get(&t.dep.key).as_deref()) {
                t.revoke();
            }
        }
        let expiry = credential.expires_after.map(|at| {
            let left = at.saturating_sub(chrono::Utc::now().timestamp());
            let left = Duration::from_secs(u64::try_from(left).unwrap_or(0));
            tokio::time::Instant::now() + left
        });
        async move {
            let revoked = async {
                let waits = tracked.iter().map(|t| {
                    let mut rx = t.revoked.subscribe();
                    Box::pin(async move {
                        let _ = rx.wait_for(|revoked| *revoked).await;
                    })
                });
                if tracked.is_empty() {
                    std::future::pending::<()>().await;
                } else {
                    futures::future::select_all(waits).await;
                }
            };
            let expired = async {
                match expiry {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                _ = revoked => {}
                _ = expired => {}
            }
        }
    }

    /// The shared signal of `dep`, created on first use.
    fn track(&self, dep: &Dependency) -> Arc<Tracked> {
        let mut map = self.registry.lock();
        let by_uid = map.entry(dep.key.clone()).or_default();
        let id = (dep.uid.clone(), dep.revision);
        if let Some(live) = by_uid.get(&id).and_then(Weak::upgrade) {
            return live;
        }
        let tracked = Arc::new(Tracked {
            dep: dep.clone(),
            revoked: watch::Sender::new(false),
            registry: Arc::downgrade(&self.registry),
        });
        by_uid.insert(id, Arc::downgrade(&tracked));
        tracked
    }
}

/// The live signals on `key` (all of them when `key` is `None`), taken out of the lock: they are
/// checked and dropped outside it, since dropping the last one locks the registry again.
fn waiting_on(registry: &Registry, key: Option<&str>) -> Vec<Arc<Tracked>> {
    let map = registry.lock();
    let entries: Box<dyn Iterator<Item = &HashMap<_, Weak<Tracked>>>> = match key {
        Some(k) => Box::new(map.get(k).into_iter()),
        None => Box::new(map.values()),
    };
    entries
        .flat_map(|by_uid| by_uid.values().filter_map(Weak::upgrade))
        .collect()
}

/// Revoke the signals a change to the cache invalidates.
async fn follow(registry: &Registry, cache: &Cache) {
    let mut changes = match cache.subscribe("/registry/", Some(cache.revision())) {
        Ok(sub) => sub.live,
        Err(e) => {
            tracing::error!(error = %e, "revocation of open watches cannot follow the cache");
            return;
        }
    };
    loop {
        let waiting = match changes.recv().await {
            Ok(change) => waiting_on(registry, Some(&change.object.key)),
            // Changes were missed: check every dependency against the cache as it is now.
            Err(RecvError::Lagged(_)) => waiting_on(registry, None),
            Err(RecvError::Closed) => return,
        };
        for t in &waiting {
            if !t.dep.holds(cache.get(&t.dep.key).as_deref()) && !*t.revoked.borrow() {
                tracing::info!(key = %t.dep.key, "a credential's object is gone: ending what it opened");
                t.revoke();
            }
        }
    }
}

#[cfg(test)]
mod tests;
