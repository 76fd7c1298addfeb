//! Completing a join: once a pull cluster's agent renews its Lease, it holds its own credential
//! and the bootstrap credential's grant to fetch that credential is taken back
//! ([`registry::complete_join`]). Only the agent can renew its Lease (the bootstrap user may not
//! write Leases), so a renewed Lease is proof the agent fetched its token.
//!
//! Level-triggered: every Lease of a cluster is looked at as it appears or changes, also those
//! of clusters that joined before this controller ran. A completed join labels its Lease
//! ([`registry::JOIN_COMPLETE_LABEL`]) and this controller watches only Leases without that
//! label, so the renewals that follow every few seconds never reach it; within a process each
//! Lease is also handled once (by uid).

use std::collections::HashSet;

use flotilla_apis::names::SYSTEM_NAMESPACE;
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use kube::runtime::{watcher, WatchStreamExt};
use kube::{Api, Client, ResourceExt};

use crate::registry::{self, CLUSTER_LABEL};

/// Runs until dropped.
pub async fn run(hub: Client) {
    let leases: Api<Lease> = Api::namespaced(hub.clone(), SYSTEM_NAMESPACE);
    let mut done: HashSet<String> = HashSet::new();
    let selector = format!("{CLUSTER_LABEL},!{}", registry::JOIN_COMPLETE_LABEL);
    let config = watcher::Config::default().labels(&selector);
    let mut events = watcher(leases, config)
        .default_backoff()
        .applied_objects()
        .boxed();
    while let Some(event) = events.next().await {
        let lease = match event {
            Ok(lease) => lease,
            Err(e) => {
                tracing::warn!(error = %e, "watching cluster Leases");
                continue;
            }
        };
        let Some(uid) = lease.uid().filter(|_| renewed(&lease)) else {
            continue;
        };
        if done.contains(&uid) {
            continue;
        }
        match registry::complete_join(&hub, &lease.name_any()).await {
            Ok(_) => {
                done.insert(uid);
            }
            // Tried again on the Lease's next renewal.
            Err(e) => tracing::warn!(cluster = %lease.name_any(), error = %e, "completing a join"),
        }
    }
}

/// Has someone renewed the Lease? Approval creates it without a holder.
fn renewed(lease: &Lease) -> bool {
    lease
        .spec
        .as_ref()
        .and_then(|s| s.holder_identity.as_deref())
        .is_some_and(|h| !h.is_empty())
}
