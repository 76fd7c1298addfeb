//! A work queue of namespaces for the loops that recompute a namespace's status objects
//! (ResourceQuota, PodDisruptionBudget): changes queued while one round runs are worked once per
//! namespace, and a namespace whose work fails is retried shortly after; [`write_statuses`] is
//! that work's write.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinSet;

use crate::objects::{guaranteed_update, Writer};
use crate::registry::ResourceInfo;
use crate::Api;

/// How soon a namespace whose work failed is tried again.
const RETRY: Duration = Duration::from_millis(200);

/// Starts a worker (in `tasks`, ending with them) calling `work(api, namespace)` for each
/// namespace sent to the returned sender; `what` names the work in logs.
pub(super) fn start<F, Fut>(
    tasks: &mut JoinSet<()>,
    api: Arc<Api>,
    what: &'static str,
    work: F,
) -> UnboundedSender<String>
where
    F: Fn(Arc<Api>, String) -> Fut + Send + 'static,
    Fut: Future<Output = crate::error::Result<()>> + Send,
{
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let retry = tx.clone();
    tasks.spawn(async move {
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

/// Writes `status(object)` as the status of every object of `res` in `ns` whose status is not
/// what it should read, skipping the ones being deleted; one deleted meanwhile is no error.
pub(super) async fn write_statuses<F>(
    api: &Arc<Api>,
    res: &ResourceInfo,
    ns: &str,
    status: F,
) -> crate::error::Result<()>
where
    F: Fn(&Value) -> Value,
{
    let (objects, _, _) = api
        .cache
        .list(&res.key_prefix(Some(ns)), None, None, |_| true);
    for o in objects {
        let current = o.value();
        if current.pointer("/metadata/deletionTimestamp").is_some()
            || current.get("status") == Some(&status(&current))
        {
            continue;
        }
        let r = guaranteed_update(api, Writer::Server, res, &o.key, &o.name, false, |cur| {
            let mut new = cur.clone();
            if let Some(obj) = new.as_object_mut() {
                obj.insert("status".into(), status(cur));
            }
            Ok(new)
        })
        .await;
        match r {
            Ok(_) => {}
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Follows every change and queues on `tx` the namespace of each change `relevant` (given the
/// storage key) deems relevant, when that namespace holds objects of `group`/v1 `plural` (the
/// objects whose status the loop writes).
pub(super) async fn follow_namespaces(
    api: Arc<Api>,
    tx: UnboundedSender<String>,
    group: &'static str,
    plural: &'static str,
    relevant: fn(&str) -> bool,
) {
    super::follow(api.clone(), "/registry/", move |c| {
        let tx = tx.clone();
        let api = api.clone();
        async move {
            let Some(ns) = c.object.namespace.clone() else {
                return;
            };
            if !relevant(&c.object.key) {
                return;
            }
            let Some(res) = api.registry.snapshot().get(group, "v1", plural).cloned() else {
                return;
            };
            if api.cache.count(&res.key_prefix(Some(&ns))) > 0 {
                let _ = tx.send(ns);
            }
        }
    })
    .await;
}
