//! Loops inside the server that Kubernetes semantics need: namespace deletion, ownerReference
//! garbage collection, CRD establishment, the Service `default/kubernetes` with its endpoints,
//! ResourceQuota and PodDisruptionBudget status.
//!
//! Each is level-triggered: it follows the watch cache from its current state, and on every
//! change re-reads what it needs and acts, so running twice or after a crash is safe.
//!
//! Of several replicas, every one runs the loops that keep what it serves itself (CRDs, the
//! policies' status, the Service `default/kubernetes`, the system PriorityClasses), but only
//! the one the store elects ([`flotilla_store::Store::runs_loops`]) runs those that follow
//! every write and write on their own: garbage collection, namespace deletion, quota and budget
//! status. Started afresh wherever the lead goes, they need no hand-over.

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
    tokio::spawn(crd::run(api.clone()));
    tokio::spawn(crate::admission::policy::status::run(api.clone()));
    tokio::spawn(bootstrap::run(api.clone()));
    tokio::spawn(priority_classes::run(api.clone()));
    led(api, "namespace deletion", namespace::run);
    led(api, "garbage collector", gc::run);
    led(api, "quota status", quota::run);
    led(api, "budget status", disruption::run);
}

/// Run the loop `run` while this process leads the loops, from scratch each time it comes to
/// lead; its tasks end when the lead goes elsewhere.
fn led<F, Fut>(api: &Arc<Api>, what: &'static str, run: F)
where
    F: Fn(Arc<Api>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let api = api.clone();
    tokio::spawn(async move {
        let mut leads = api.store.runs_loops();
        loop {
            if leads.wait_for(|l| *l).await.is_err() {
                // The store closed without this process leading.
                return;
            }
            tracing::debug!(what, "loop starting on this replica");
            let mut task = tokio::spawn(run(api.clone()));
            let lost = async {
                // A closed channel keeps its last value: leading for good.
                if leads.wait_for(|l| !*l).await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            tokio::select! {
                _ = &mut task => return,
                () = lost => {
                    task.abort();
                    tracing::debug!(what, "loop stopped: another replica runs it");
                }
            }
        }
    });
}

/// Follow every change in the cache (starting with the current state as additions), calling
/// `f` for each. One that falls behind the feed catches up from the last change it handled
/// (from the current state again only when that is compacted away).
pub(crate) async fn follow<F, Fut>(api: Arc<Api>, prefix: &'static str, mut f: F)
where
    F: FnMut(Arc<crate::cache::Change>) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    // Where to resume after falling behind the feed: the last change handled.
    let mut resume: Option<flotilla_store::Revision> = None;
    loop {
        let sub = match resume {
            Some(rv) => match api.cache.subscribe_replaying(prefix, Some(rv)).await {
                Ok(s) => Ok(s),
                // Compacted past it: start again from the current state.
                Err(_) => api.cache.subscribe(prefix, None),
            },
            None => api.cache.subscribe(prefix, None),
        };
        let sub = match sub {
            Ok(s) => s,
            Err(e) => {
                tracing::error!(error = %e, "lifecycle loop cannot subscribe");
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                resume = None;
                continue;
            }
        };
        let start = sub.revision;
        for c in sub.replay {
            f(c).await;
        }
        // The replay ends at `start`: handled up to there.
        let mut last = start;
        let mut rx = sub.live;
        loop {
            match rx.recv().await {
                Ok(c) if c.revision <= start => {}
                Ok(c) => {
                    last = c.revision;
                    if c.object.key.starts_with(prefix) {
                        f(c).await;
                    }
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                    resume = Some(last);
                    break;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}
