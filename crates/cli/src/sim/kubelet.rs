//! The fake kubelet of a simulated cluster: a workload's pods "become ready" `--ready-after`
//! its spec changes. Deployments and StatefulSets report every replica updated, ready and
//! available for their generation; Jobs complete. No pods are stored: what the hub reads back
//! from a member is the workload's status, and that is what this writes.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cache::{Change, ChangeKind};
use flotilla_api::Api;
use parking_lot::Mutex;
use serde_json::{json, Value};
use tokio::sync::broadcast::error::RecvError;

/// The kinds it makes progress: storage key prefix → (group, version, plural).
const KINDS: [(&str, (&str, &str, &str)); 3] = [
    ("/registry/apps/deployments/", ("apps", "v1", "deployments")),
    (
        "/registry/apps/statefulsets/",
        ("apps", "v1", "statefulsets"),
    ),
    ("/registry/batch/jobs/", ("batch", "v1", "jobs")),
];

/// Run the kubelet of `api`'s cluster for as long as the process.
pub fn start(api: Arc<Api>, ready_after: Duration) {
    tokio::spawn(async move {
        let pending: Arc<Mutex<HashSet<String>>> = Arc::default();
        loop {
            let mut sub = match api.cache.subscribe("/registry/", None) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e.message, "the fake kubelet cannot watch");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            let see = |change: &Change| seen(&api, &pending, ready_after, change);
            for change in std::mem::take(&mut sub.replay) {
                see(&change);
            }
            loop {
                match sub.live.recv().await {
                    Ok(change) => see(&change),
                    // Fell behind: start over from the current state.
                    Err(RecvError::Lagged(_)) => break,
                    Err(RecvError::Closed) => return,
                }
            }
        }
    });
}

/// A change to `key`: if it is a workload whose status is not yet what its spec asks for,
/// write that status after `ready_after` (once, however many changes come meanwhile).
fn seen(
    api: &Arc<Api>,
    pending: &Arc<Mutex<HashSet<String>>>,
    ready_after: Duration,
    change: &Change,
) {
    let key = change.object.key.as_str();
    let Some((_, resource)) = KINDS.iter().find(|(prefix, _)| key.starts_with(prefix)) else {
        return;
    };
    if matches!(change.kind, ChangeKind::Deleted) || settled(resource.2, &change.object.value()) {
        return;
    }
    if !pending.lock().insert(key.to_owned()) {
        return;
    }
    let (api, pending, key, resource) = (api.clone(), pending.clone(), key.to_owned(), *resource);
    tokio::spawn(async move {
        tokio::time::sleep(ready_after).await;
        // Taken off first: a change while writing is seen again.
        pending.lock().remove(&key);
        let mut parts = key.rsplitn(3, '/');
        let (name, namespace) = (parts.next().unwrap_or_default(), parts.next());
        let written = flotilla_api::local::update_status(&api, resource, namespace, name, |obj| {
            (!settled(resource.2, obj)).then(|| status(resource.2, obj))
        })
        .await;
        match written {
            // Deleted meanwhile: nothing to make ready.
            Err(e) if e.code == 404 => {}
            Err(e) => {
                tracing::debug!(key, error = %e.message, "the fake kubelet could not write a status")
            }
            Ok(()) => {}
        }
    });
}

fn replicas(obj: &Value) -> i64 {
    obj.pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1)
}

/// Whether `obj`'s status already says what the kubelet would write.
fn settled(plural: &str, obj: &Value) -> bool {
    let status = &obj["status"];
    if plural == "jobs" {
        return status["conditions"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Complete" && c["status"] == "True")
        });
    }
    status["observedGeneration"] == obj["metadata"]["generation"]
        && status["readyReplicas"].as_i64().unwrap_or(0) == replicas(obj)
        && status["replicas"].as_i64().unwrap_or(0) == replicas(obj)
}

/// The status of a workload whose pods are all ready on its current spec.
fn status(plural: &str, obj: &Value) -> Value {
    let now = flotilla_api::meta::now_rfc3339();
    let generation = obj["metadata"]["generation"].clone();
    let n = replicas(obj);
    match plural {
        "jobs" => {
            let completions = obj
                .pointer("/spec/completions")
                .and_then(Value::as_i64)
                .unwrap_or(1);
            json!({
                "startTime": obj["status"]["startTime"].as_str().unwrap_or(&now),
                "completionTime": now,
                "succeeded": completions,
                "conditions": [
                    {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "lastProbeTime": now, "lastTransitionTime": now},
                    {"type": "Complete", "status": "True", "reason": "CompletionsReached", "lastProbeTime": now, "lastTransitionTime": now},
                ],
            })
        }
        "statefulsets" => json!({
            "observedGeneration": generation,
            "replicas": n, "readyReplicas": n, "currentReplicas": n,
            "updatedReplicas": n, "availableReplicas": n,
        }),
        _ => json!({
            "observedGeneration": generation,
            "replicas": n, "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                 "message": "Deployment has minimum availability.", "lastUpdateTime": now, "lastTransitionTime": now},
                {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
                 "message": "ReplicaSet has successfully progressed.", "lastUpdateTime": now, "lastTransitionTime": now},
            ],
        }),
    }
}
