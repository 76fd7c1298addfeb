//! The two PriorityClasses kube-apiserver creates at start (its
//! `scheduling/bootstrap-system-priority-classes` hook): `system-node-critical` and
//! `system-cluster-critical`. Created when missing, retried until the store takes them; they
//! cannot be deleted ([`crate::admission::kinds::admit_delete`]).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::admission::validation::SYSTEM_PRIORITY_CLASSES;
use crate::objects::commit_create;
use crate::Api;

/// The field manager kube-apiserver creates them with.
const MANAGER: &str = "kube-apiserver";

/// Create both classes if missing; retries every second until each exists.
pub(super) async fn run(api: Arc<Api>) {
    let snap = api.registry.snapshot();
    let Some(res) = snap
        .get("scheduling.k8s.io", "v1", "priorityclasses")
        .cloned()
    else {
        return;
    };
    for (name, value, description) in SYSTEM_PRIORITY_CLASSES {
        loop {
            let exists = match api.cache.sync().await {
                Ok(()) => api.cache.get(&res.key(None, name)).is_some(),
                Err(_) => false,
            };
            if exists {
                break;
            }
            let pc = json!({
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name}, "value": value, "description": description,
            });
            match commit_create(&api, &res, pc, Some(MANAGER), false).await {
                Ok(_) => {
                    tracing::info!(priority_class = name, "created system priority class");
                    break;
                }
                Err(e) if e.code == 409 => break,
                Err(e) => {
                    tracing::warn!(priority_class = name, error = %e, "cannot create system priority class yet");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    }
}
