//! Health of workload objects mid-rollout, rolled out and failed, as a member returns them.
//!
//! Each table is one `json!` array (left alone by rustfmt, so it reads as a table): a case names
//! what it shows, the expected outcome (`available`, `pending` or `degraded`), a fragment of the
//! expected message, and the parts of the object that matter.

use serde_json::{json, Value};

use crate::status::health::assess;

/// Runs every case of `cases` through [`assess`], building each object with `object`.
pub(in crate::status) fn check(cases: Value, object: impl Fn(&Value) -> Value) {
    for case in cases.as_array().expect("a table of cases") {
        let what = &case["what"];
        let health = assess(&object(case));
        let outcome = match (health.available, health.degraded) {
            (true, false) => "available",
            (false, false) => "pending",
            (false, true) => "degraded",
            (true, true) => "available and degraded",
        };
        assert_eq!(outcome, case["expect"], "{what}: {health:?}");
        let message = case["message"].as_str().expect("a message fragment");
        assert!(
            health.message.contains(message),
            "{what}: message {:?} lacks {message:?}",
            health.message
        );
        let reason = if health.available {
            "Available"
        } else {
            "ResourceNotAvailable"
        };
        assert_eq!(health.reason, reason, "{what}");
    }
}

/// `apps/v1` `kind` named `web` in `demo`, with the case's generation, spec and status.
fn apps(kind: &str, case: &Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": "web", "namespace": "demo", "generation": case["generation"]},
        "spec": case["spec"], "status": case["status"],
    })
}

#[test]
fn deployments() {
    check(
        json!([
            {"what": "rolled out", "expect": "available", "message": "3 of 3 replicas available",
             "generation": 3, "spec": {"replicas": 3},
             "status": {"observedGeneration": 3, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3,
                        "conditions": [{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}},
            {"what": "replicas default to 1", "expect": "available", "message": "1 of 1",
             "generation": 1, "spec": {},
             "status": {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1}},
            {"what": "scaled to zero", "expect": "available", "message": "0 of 0",
             "generation": 2, "spec": {"replicas": 0}, "status": {"observedGeneration": 2}},
            {"what": "fresh, no status yet", "expect": "pending", "message": "observe generation 1",
             "generation": 1, "spec": {"replicas": 2}, "status": {}},
            {"what": "new spec not observed yet", "expect": "pending", "message": "observe generation 4",
             "generation": 4, "spec": {"replicas": 3},
             "status": {"observedGeneration": 3, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 3}},
            {"what": "mid-rollout", "expect": "pending", "message": "rollout in progress: 1 of 3 updated",
             "generation": 4, "spec": {"replicas": 3},
             "status": {"observedGeneration": 4, "replicas": 4, "updatedReplicas": 1, "readyReplicas": 3,
                        "availableReplicas": 3, "unavailableReplicas": 1}},
            {"what": "old replicas terminating", "expect": "pending", "message": "1 old replicas pending termination",
             "generation": 4, "spec": {"replicas": 3},
             "status": {"observedGeneration": 4, "replicas": 4, "updatedReplicas": 3, "availableReplicas": 3}},
            {"what": "updated, not yet available", "expect": "pending", "message": "2 of 3 replicas available",
             "generation": 4, "spec": {"replicas": 3},
             "status": {"observedGeneration": 4, "replicas": 3, "updatedReplicas": 3, "availableReplicas": 2}},
            {"what": "scaling down", "expect": "pending", "message": "scaling down: 5 replicas, want 3",
             "generation": 5, "spec": {"replicas": 3},
             "status": {"observedGeneration": 5, "replicas": 5, "updatedReplicas": 5, "availableReplicas": 5}},
            {"what": "progress deadline exceeded", "expect": "degraded", "message": "has timed out progressing",
             "generation": 5, "spec": {"replicas": 2},
             "status": {"observedGeneration": 5, "replicas": 3, "updatedReplicas": 1, "availableReplicas": 2,
                        "conditions": [{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                                        "message": "ReplicaSet \"web-7d9f\" has timed out progressing."}]}},
            {"what": "replica failure", "expect": "degraded", "message": "FailedCreate: pods \"web-1\" is forbidden: exceeded quota",
             "generation": 2, "spec": {"replicas": 2},
             "status": {"observedGeneration": 2, "replicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
                        "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                        "message": "pods \"web-1\" is forbidden: exceeded quota"}]}}
        ]),
        |case| apps("Deployment", case),
    );
}

#[test]
fn stateful_sets() {
    check(
        json!([
            {"what": "rolled out", "expect": "available", "message": "3 of 3 replicas ready",
             "generation": 2, "spec": {"replicas": 3, "updateStrategy": {"type": "RollingUpdate"}},
             "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3,
                        "currentRevision": "web-5c7", "updateRevision": "web-5c7"}},
            {"what": "pods not ready", "expect": "pending", "message": "1 of 3 replicas ready",
             "generation": 2, "spec": {"replicas": 3},
             "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 1, "updatedReplicas": 3,
                        "currentRevision": "web-5c7", "updateRevision": "web-5c7"}},
            {"what": "rolling update", "expect": "pending", "message": "1 of 3 updated",
             "generation": 2, "spec": {"replicas": 3},
             "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 1,
                        "currentRevision": "web-5c7", "updateRevision": "web-6d8"}},
            {"what": "revision not switched yet", "expect": "pending", "message": "waiting for revision web-6d8",
             "generation": 2, "spec": {"replicas": 3},
             "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3,
                        "currentRevision": "web-5c7", "updateRevision": "web-6d8"}},
            {"what": "partitioned rollout done", "expect": "available", "message": "partitioned rollout complete",
             "generation": 2, "spec": {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}},
             "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 1,
                        "currentRevision": "web-5c7", "updateRevision": "web-6d8"}},
            {"what": "partitioned rollout under way", "expect": "pending", "message": "0 of 1 updated (partition 2)",
             "generation": 2, "spec": {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}},
             "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 0,
                        "currentRevision": "web-5c7", "updateRevision": "web-6d8"}},
            {"what": "OnDelete waits for no rollout", "expect": "available", "message": "3 of 3",
             "generation": 2, "spec": {"replicas": 3, "updateStrategy": {"type": "OnDelete"}},
             "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 0,
                        "currentRevision": "web-5c7", "updateRevision": "web-6d8"}},
            {"what": "new spec not observed yet", "expect": "pending", "message": "observe generation 3",
             "generation": 3, "spec": {"replicas": 3},
             "status": {"observedGeneration": 2, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 3}}
        ]),
        |case| apps("StatefulSet", case),
    );
}

#[test]
fn daemon_sets_and_replica_sets() {
    check(
        json!([
            {"what": "rolled out", "expect": "available", "message": "4 of 4 pods available",
             "generation": 1, "spec": {},
             "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "currentNumberScheduled": 4,
                        "updatedNumberScheduled": 4, "numberAvailable": 4, "numberReady": 4}},
            {"what": "rolling update", "expect": "pending", "message": "2 of 4 updated",
             "generation": 1, "spec": {},
             "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "updatedNumberScheduled": 2, "numberAvailable": 4}},
            {"what": "pods starting", "expect": "pending", "message": "3 of 4 pods available",
             "generation": 1, "spec": {},
             "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "updatedNumberScheduled": 4,
                        "numberAvailable": 3, "numberUnavailable": 1}},
            {"what": "OnDelete waits for no rollout", "expect": "available", "message": "4 of 4",
             "generation": 1, "spec": {"updateStrategy": {"type": "OnDelete"}},
             "status": {"observedGeneration": 1, "desiredNumberScheduled": 4, "updatedNumberScheduled": 0, "numberAvailable": 4}}
        ]),
        |case| apps("DaemonSet", case),
    );
    check(
        json!([
            {"what": "available", "expect": "available", "message": "2 of 2",
             "generation": 1, "spec": {"replicas": 2},
             "status": {"observedGeneration": 1, "replicas": 2, "readyReplicas": 2, "availableReplicas": 2}},
            {"what": "short", "expect": "pending", "message": "1 of 2 replicas available",
             "generation": 1, "spec": {"replicas": 2},
             "status": {"observedGeneration": 1, "replicas": 2, "readyReplicas": 1, "availableReplicas": 1}},
            {"what": "quota", "expect": "degraded", "message": "replica failure: FailedCreate",
             "generation": 1, "spec": {"replicas": 2},
             "status": {"observedGeneration": 1, "replicas": 1, "availableReplicas": 1,
                        "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate"}]}}
        ]),
        |case| apps("ReplicaSet", case),
    );
}

#[test]
fn jobs() {
    check(
        json!([
            {"what": "complete", "expect": "available", "message": "completed: 1 succeeded", "spec": {},
             "status": {"succeeded": 1, "startTime": "2025-01-02T03:04:05Z", "completionTime": "2025-01-02T03:05:00Z",
                        "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}},
            {"what": "running", "expect": "pending", "message": "running: 2 active", "spec": {},
             "status": {"active": 2, "startTime": "2025-01-02T03:04:05Z"}},
            {"what": "not started", "expect": "pending", "message": "running: 0 active", "spec": {}, "status": {}},
            {"what": "failed", "expect": "degraded",
             "message": "job failed: BackoffLimitExceeded: Job has reached the specified backoff limit",
             "spec": {"backoffLimit": 6},
             "status": {"failed": 7, "conditions": [
                 {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
                  "message": "Job has reached the specified backoff limit"},
                 {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                  "message": "Job has reached the specified backoff limit"}]}},
            {"what": "failing, pods still terminating", "expect": "degraded", "message": "DeadlineExceeded",
             "spec": {"activeDeadlineSeconds": 60},
             "status": {"active": 1, "conditions": [{"type": "FailureTarget", "status": "True", "reason": "DeadlineExceeded"}]}},
            {"what": "suspended", "expect": "pending", "message": "suspended", "spec": {"suspend": true}, "status": {}}
        ]),
        |case| {
            json!({
                "apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "migrate", "namespace": "demo", "generation": 1},
                "spec": case["spec"], "status": case["status"],
            })
        },
    );
}
