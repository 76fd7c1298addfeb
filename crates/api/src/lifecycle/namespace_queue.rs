//! A work queue of namespaces for the loops that recompute a namespace's status objects
//! (ResourceQuota, PodDisruptionBudget): changes queued while one round runs are worked once per
//! namespace, and a namespace whose work fails is retried shortly after.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use crate::Api;

/// How soon a namespace whose work failed is tried again.
const RETRY: Duration = Duration::from_millis(200);

/// Starts a worker calling `work(api, namespace)` for each namespace sent to the returned
/// sender; `what` names the work in logs.
pub(super) fn start<F, Fut>(api: Arc<Api>, what: &'static str, work: F) -> UnboundedSender<String>
where
    F: Fn(Arc<Api>, String) -> Fut + Send + 'static,
    Fut: Future<Output = crate::error::Result<()>> + Send,
{
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let retry = tx.clone();
    tokio::spawn(async move {
        while let Some(ns) = rx.recv().await {
            let mut pending = BTreeSet::from([ns]);
            while let Ok(more) = rx.try_recv() {
                pending.insert(more);
            }
            for ns in pending {
                if let Err(e) = work(api.clone(), ns.clone()).await {
                    tracing::debug!(namespace = %ns, error = %e, "{what} not written; retrying");
                    let retry = retry.clone();
                    tokio::spawn(async move {
                        tokio::time::sleep(RETRY).await;
                        let _ = retry.send(ns);
                    });
                }
            }
        }
    });
    tx
}
