//! The ResourceQuota status loop, as kube-controller-manager's resourcequota controller: every
//! quota's `status.hard` is its `spec.hard`, and `status.used` what the objects of its
//! namespace use, recounted as soon as anything in a namespace with quotas changes (a create,
//! a delete, a pod ending, the quota itself; a status written by hand is put right).
//!
//! The count is [`crate::admission::quota`]'s, so admission and status never disagree.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use crate::admission::quota;
use crate::registry::ResourceInfo;
use crate::Api;

/// How often every namespace with quotas is recounted even without a change: a deleted pod's
/// grace period ends without a write.
const RESYNC: Duration = Duration::from_secs(30);

pub(super) async fn run(api: Arc<Api>) {
    // The worker and the ticker end with the loop.
    let mut tasks = tokio::task::JoinSet::new();
    let tx = super::namespace_queue::start(
        &mut tasks,
        api.clone(),
        "quota status",
        |api, ns| async move { recount(&api, &ns).await },
    );
    let ticker_api = api.clone();
    let ticker = tx.clone();
    tasks.spawn(async move {
        let mut tick = tokio::time::interval(RESYNC);
        loop {
            tick.tick().await;
            let Some(rq) = quotas_resource(&ticker_api) else {
                continue;
            };
            let (all, _, _) = ticker_api
                .cache
                .list(&rq.key_prefix(None), None, None, |_| true);
            let namespaces: BTreeSet<String> =
                all.iter().filter_map(|q| q.namespace.clone()).collect();
            for ns in namespaces {
                if ticker.send(ns).is_err() {
                    return;
                }
            }
        }
    });
    // Any change in a namespace with quotas may change what it uses.
    super::namespace_queue::follow_namespaces(api, tx, "", "resourcequotas", |_| true).await;
}

fn quotas_resource(api: &Api) -> Option<ResourceInfo> {
    api.registry
        .snapshot()
        .get("", "v1", "resourcequotas")
        .map(|r| (**r).clone())
}

/// Writes every quota of `ns` whose status is not what it should read.
async fn recount(api: &Arc<Api>, ns: &str) -> crate::error::Result<()> {
    let Some(rq) = quotas_resource(api) else {
        return Ok(());
    };
    // Each quota is counted as of the moment it is looked at.
    super::namespace_queue::write_statuses(api, &rq, ns, |q| {
        quota::status(api, ns, q, quota::now())
    })
    .await
}
