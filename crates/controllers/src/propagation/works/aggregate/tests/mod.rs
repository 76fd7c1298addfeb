use serde_json::{json, Value};

use super::*;

const NOW: &str = "2026-03-01T12:00:00Z";
const EARLIER: &str = "2026-03-01T11:00:00Z";

fn member<'a>(cluster: &'a str, status: &'a Value, up_to_date: bool) -> Member<'a> {
    Member {
        cluster,
        status: Some(status),
        up_to_date,
    }
}

fn deployment(replicas: i64, generation: i64, status: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": "web", "namespace": "shop", "generation": generation },
        "spec": { "replicas": replicas },
        "status": status,
    })
}

fn deploy_status(replicas: i64, updated: i64, ready: i64, available: i64) -> Value {
    json!({
        "replicas": replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "unavailableReplicas": replicas - available,
        "observedGeneration": 1,
    })
}

/// kubectl's rollout status check for a Deployment (`DeploymentStatusViewer`).
fn kubectl_rolled_out(deployment: &Value) -> bool {
    let n = |pointer: &str| deployment.pointer(pointer).and_then(Value::as_i64);
    let status = |field: &str| n(&format!("/status/{field}")).unwrap_or(0);
    n("/metadata/generation").unwrap_or(0) <= status("observedGeneration")
        && n("/spec/replicas").is_none_or(|desired| status("updatedReplicas") >= desired)
        && status("replicas") <= status("updatedReplicas")
        && status("availableReplicas") >= status("updatedReplicas")
}

/// `template` with `status` as aggregated.
fn with_status(template: &Value, status: Value) -> Value {
    let mut template = template.clone();
    template["status"] = status;
    template
}

fn condition<'a>(status: &'a Value, type_: &str) -> &'a Value {
    status["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

// === aggregate: Deployment ===

mod service;

#[test]
fn deployment_sums_over_three_members() {
    let template = deployment(6, 1, json!({}));
    let (a, b, c) = (
        deploy_status(2, 2, 2, 2),
        deploy_status(3, 2, 1, 1),
        json!({ "replicas": 1, "readyReplicas": 1 }),
    );
    let members = [
        member("a", &a, true),
        member("b", &b, true),
        member("c", &c, true),
    ];
    let status = aggregate(&template, &members, NOW, None).unwrap();
    for (field, sum) in [
        ("replicas", 6),
        ("updatedReplicas", 4),
        ("readyReplicas", 4),
        ("availableReplicas", 3),
        // c does not report it: 0.
        ("unavailableReplicas", 2),
        ("observedGeneration", 1),
    ] {
        assert_eq!(status[field], sum, "{field}");
    }
    assert_eq!(condition(&status, "Available")["status"], "False");
    assert_eq!(
        condition(&status, "Available")["reason"],
        "MinimumReplicasUnavailable"
    );
    assert_eq!(
        condition(&status, "Progressing")["reason"],
        "ReplicaSetUpdated"
    );
    assert!(!kubectl_rolled_out(&with_status(&template, status)));
}

#[test]
fn missing_numbers_count_as_zero_and_are_written() {
    let template = deployment(1, 1, json!({}));
    let empty = json!({});
    let status = aggregate(&template, &[member("a", &empty, true)], NOW, None).unwrap();
    for field in DEPLOYMENT {
        assert_eq!(status[*field], 0, "{field}");
    }
}

#[test]
fn member_not_up_to_date_keeps_the_old_observed_generation() {
    // Generation 3 is new; one member still runs (and reports) the old rendering.
    let template = deployment(4, 3, json!({ "observedGeneration": 2 }));
    let (a, b) = (deploy_status(2, 2, 2, 2), deploy_status(2, 2, 2, 2));
    let members = [member("a", &a, true), member("b", &b, false)];
    let status = aggregate(&template, &members, NOW, None).unwrap();
    assert_eq!(status["observedGeneration"], 2);
    assert_eq!(
        condition(&status, "Progressing")["reason"],
        "ReplicaSetUpdated"
    );
    assert!(!kubectl_rolled_out(&with_status(&template, status)));

    // A member without status counts as not having observed it either.
    let members = [
        member("a", &a, true),
        Member {
            cluster: "b",
            status: None,
            up_to_date: true,
        },
    ];
    let status = aggregate(&template, &members, NOW, None).unwrap();
    assert_eq!(status["observedGeneration"], 2);

    // Nothing written before: nothing written now.
    let fresh = deployment(4, 3, json!(null));
    let status = aggregate(&fresh, &[member("a", &a, false)], NOW, None).unwrap();
    assert_eq!(status.get("observedGeneration"), None);
    assert!(!kubectl_rolled_out(&with_status(&fresh, status)));
}

#[test]
fn no_members_do_not_advance_the_observed_generation() {
    let template = deployment(2, 5, json!({ "observedGeneration": 4 }));
    let status = aggregate(&template, &[], NOW, None).unwrap();
    assert_eq!(status["observedGeneration"], 4);
    assert_eq!(status["replicas"], 0);
    assert!(!kubectl_rolled_out(&with_status(&template, status)));
}

#[test]
fn rollout_completes_when_every_member_has_rolled_out() {
    // Divided: 5 replicas as 3 + 2.
    let template = deployment(5, 2, json!({ "observedGeneration": 1 }));
    let (a, b) = (deploy_status(3, 3, 3, 3), deploy_status(2, 2, 2, 2));
    let done = [member("a", &a, true), member("b", &b, true)];
    let status = aggregate(&template, &done, NOW, None).unwrap();
    assert_eq!(status["observedGeneration"], 2);
    assert_eq!(condition(&status, "Available")["status"], "True");
    assert_eq!(
        condition(&status, "Available")["reason"],
        "MinimumReplicasAvailable"
    );
    assert_eq!(condition(&status, "Progressing")["status"], "True");
    assert_eq!(
        condition(&status, "Progressing")["reason"],
        "NewReplicaSetAvailable"
    );
    assert!(kubectl_rolled_out(&with_status(&template, status)));

    // Each way one member can still be rolling out keeps the hub waiting.
    for (what, b) in [
        (
            "old replicas pending termination",
            deploy_status(3, 2, 3, 3),
        ),
        ("updated replicas not available", deploy_status(2, 2, 2, 1)),
        ("too few updated replicas", deploy_status(1, 1, 1, 1)),
    ] {
        let members = [member("a", &a, true), member("b", &b, true)];
        let status = aggregate(&template, &members, NOW, None).unwrap();
        assert_eq!(
            condition(&status, "Progressing")["reason"],
            "ReplicaSetUpdated",
            "{what}"
        );
        assert!(
            !kubectl_rolled_out(&with_status(&template, status)),
            "{what}"
        );
    }
}

#[test]
fn condition_times_move_only_with_the_status() {
    let template = deployment(
        2,
        1,
        json!({
            "conditions": [
                {
                    "type": "Available", "status": "True", "reason": "MinimumReplicasAvailable",
                    "lastUpdateTime": EARLIER, "lastTransitionTime": EARLIER,
                },
                {
                    "type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
                    "lastUpdateTime": EARLIER, "lastTransitionTime": EARLIER,
                },
            ],
        }),
    );
    let a = deploy_status(2, 2, 2, 2);
    let status = aggregate(&template, &[member("a", &a, true)], NOW, None).unwrap();
    // Available stays True: both times kept.
    let available = condition(&status, "Available");
    assert_eq!(available["lastTransitionTime"], EARLIER);
    assert_eq!(available["lastUpdateTime"], EARLIER);
    // Progressing stays True with a new reason: updated now, transition kept.
    let progressing = condition(&status, "Progressing");
    assert_eq!(progressing["reason"], "NewReplicaSetAvailable");
    assert_eq!(progressing["lastTransitionTime"], EARLIER);
    assert_eq!(progressing["lastUpdateTime"], NOW);

    // Available turns False: both times now.
    let b = deploy_status(2, 2, 1, 1);
    let status = aggregate(&template, &[member("a", &b, true)], NOW, None).unwrap();
    let available = condition(&status, "Available");
    assert_eq!(available["status"], "False");
    assert_eq!(available["lastTransitionTime"], NOW);
    assert_eq!(available["lastUpdateTime"], NOW);

    // Aggregating again over its own result changes nothing.
    let again = with_status(&template, status.clone());
    assert_eq!(
        aggregate(
            &again,
            &[member("a", &b, true)],
            "2027-01-01T00:00:00Z",
            None
        ),
        Some(status)
    );
}

#[test]
fn member_order_does_not_matter() {
    let template = deployment(3, 1, json!({}));
    let svc = json!({ "apiVersion": "v1", "kind": "Service", "spec": { "type": "LoadBalancer" } });
    let (a, b, c) = (
        json!({ "replicas": 1, "loadBalancer": { "ingress": [{ "ip": "10.0.0.1" }] } }),
        json!({ "replicas": 2, "loadBalancer": { "ingress": [{ "ip": "10.0.0.2" }] } }),
        json!({ "replicas": 3, "loadBalancer": { "ingress": [{ "hostname": "c.example" }] } }),
    );
    let forward = [
        member("a", &a, true),
        member("b", &b, true),
        member("c", &c, true),
    ];
    let backward = [
        member("c", &c, true),
        member("a", &a, true),
        member("b", &b, true),
    ];
    for template in [&template, &svc] {
        assert_eq!(
            aggregate(template, &forward, NOW, None),
            aggregate(template, &backward, NOW, None)
        );
    }
}

// === aggregate: other kinds ===

#[test]
fn stateful_set_replica_set_and_daemon_set() {
    let stateful_set = json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": { "generation": 4 }, "spec": { "replicas": 3 },
    });
    let (a, b) = (
        json!({ "replicas": 2, "readyReplicas": 2, "currentReplicas": 2, "updatedReplicas": 2, "availableReplicas": 2 }),
        json!({ "replicas": 1, "readyReplicas": 0, "currentReplicas": 1, "updatedReplicas": 1 }),
    );
    let members = [member("a", &a, true), member("b", &b, true)];
    assert_eq!(
        aggregate(&stateful_set, &members, NOW, None),
        Some(json!({
            "replicas": 3, "readyReplicas": 2, "currentReplicas": 3, "updatedReplicas": 3,
            "availableReplicas": 2, "observedGeneration": 4,
        }))
    );

    let replica_set = json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": { "generation": 2 }, "status": { "observedGeneration": 1 },
    });
    let members = [member("a", &a, true), member("b", &b, false)];
    assert_eq!(
        aggregate(&replica_set, &members, NOW, None),
        Some(json!({
            "replicas": 3, "readyReplicas": 2, "availableReplicas": 2, "observedGeneration": 1,
        }))
    );

    let daemon_set = json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": { "generation": 1 },
    });
    let (a, b) = (
        json!({
            "currentNumberScheduled": 3, "desiredNumberScheduled": 3, "numberAvailable": 3,
            "numberReady": 3, "updatedNumberScheduled": 3, "numberMisscheduled": 0,
            "observedGeneration": 7,
        }),
        json!({
            "currentNumberScheduled": 2, "desiredNumberScheduled": 2, "numberAvailable": 1,
            "numberReady": 1, "updatedNumberScheduled": 2, "numberMisscheduled": 1,
        }),
    );
    let members = [member("a", &a, true), member("b", &b, true)];
    assert_eq!(
        aggregate(&daemon_set, &members, NOW, None),
        Some(json!({
            "currentNumberScheduled": 5, "desiredNumberScheduled": 5, "numberAvailable": 4,
            "numberReady": 4, "updatedNumberScheduled": 5, "numberMisscheduled": 1,
            "observedGeneration": 1,
        }))
    );
}

#[test]
fn job_completes_when_every_member_completed() {
    let job = json!({ "apiVersion": "batch/v1", "kind": "Job", "spec": { "completions": 4 } });
    let a = json!({
        "succeeded": 2, "startTime": "2026-03-01T10:00:00Z", "completionTime": "2026-03-01T10:30:00Z",
    });
    let running =
        json!({ "active": 1, "succeeded": 1, "failed": 1, "startTime": "2026-03-01T09:59:00Z" });
    let status = aggregate(
        &job,
        &[member("a", &a, true), member("b", &running, true)],
        NOW,
        None,
    )
    .unwrap();
    assert_eq!(
        status,
        json!({
            "active": 1, "succeeded": 3, "failed": 1, "startTime": "2026-03-01T09:59:00Z",
        })
    );

    let b = json!({
        "succeeded": 2, "failed": 1,
        "startTime": "2026-03-01T09:59:00Z", "completionTime": "2026-03-01T10:45:00Z",
    });
    let members = [member("a", &a, true), member("b", &b, true)];
    let status = aggregate(&job, &members, NOW, None).unwrap();
    assert_eq!(status["succeeded"], 4);
    assert_eq!(status["failed"], 1);
    assert_eq!(status["active"], 0);
    assert_eq!(status["startTime"], "2026-03-01T09:59:00Z");
    assert_eq!(status["completionTime"], "2026-03-01T10:45:00Z");
    let complete = condition(&status, "Complete");
    assert_eq!(complete["status"], "True");
    assert_eq!(complete["lastTransitionTime"], NOW);

    // Written once, the condition keeps its time.
    let again = with_status(&job, status.clone());
    assert_eq!(
        aggregate(&again, &members, "2027-01-01T00:00:00Z", None),
        Some(status)
    );
    // No member: not complete.
    assert_eq!(
        condition(&aggregate(&job, &[], NOW, None).unwrap(), "Complete"),
        &Value::Null
    );
}

#[test]
fn horizontal_pod_autoscaler() {
    let hpa = json!({ "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler" });
    let (a, b) = (
        json!({ "currentReplicas": 2, "desiredReplicas": 3 }),
        json!({ "currentReplicas": 4, "desiredReplicas": 4 }),
    );
    assert_eq!(
        aggregate(
            &hpa,
            &[member("a", &a, true), member("b", &b, true)],
            NOW,
            None
        ),
        Some(json!({ "currentReplicas": 6, "desiredReplicas": 7 }))
    );
}

#[test]
fn unknown_kinds_are_not_aggregated() {
    let status = json!({ "replicas": 1 });
    let members = [member("a", &status, true)];
    for template in [
        json!({ "apiVersion": "v1", "kind": "ConfigMap" }),
        json!({ "apiVersion": "example.com/v1", "kind": "Deployment" }),
        json!({ "apiVersion": "example.com/v1", "kind": "Widget" }),
        json!({}),
    ] {
        assert_eq!(
            aggregate(&template, &members, NOW, None),
            None,
            "{template}"
        );
    }
}
