//! Loops inside the server that Kubernetes semantics need: namespace deletion, ownerReference
//! garbage collection, CRD establishment, the Service `default/kubernetes` with its endpoints,
//! ResourceQuota and PodDisruptionBudget status.
//!
//! Each is level-triggered: it follows the watch cache from its current state, and on every
//! change re-reads what it needs and acts, so running twice or after a crash is safe.

mod bootstrap;
mod crd;
mod disruption;
mod gc;
pub(crate) mod kick;
mod namespace;
mod namespace_queue;
mod priority_classes;
mod quota;

use std::sync::Arc;

use crate::Api;

pub use crd::CRD_CLEANUP_FINALIZER;

/// Start every loop.
pub fn start(api: &Arc<Api>) {
    tokio::spawn(namespace::run(api.clone()));
    tokio::spawn(gc::run(api.clone()));
    tokio::spawn(crd::run(api.clone()));
    tokio::spawn(crate::admission::policy::status::run(api.clone()));
    tokio::spawn(bootstrap::run(api.clone()));
    tokio::spawn(quota::run(api.clone()));
    tokio::spawn(disruption::run(api.clone()));
    tokio::spawn(priority_classes::run(api.clone()));
}

/// Follow every change in the cache (starting with the current state as additions), calling
/// `f` for each. Restarts from the current state if it falls behind.
pub(crate) async fn follow<F, Fut>(api: Arc<Api>, prefix: &'static str, mut f: F)
where
    F: FnMut(Arc<crate::cache::Change>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    loop {
        let sub = match api.cache.subscribe(prefix, None) {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "lifecycle loop cannot subscribe");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                continue;
            }
        };
        let start = sub.revision;
        for c in sub.replay {
            f(c).await;
        }
        let mut rx = sub.live;
        loop {
            match rx.recv().await {
                Ok(c) if c.revision <= start => {}
                Ok(c) if c.object.key.starts_with(prefix) => f(c).await,
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => break,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}
