//! The scheduler controller's decisions, from plain values: the scheduler's request, the
//! rebalance on a placement change, what is written into the binding's spec and status, the
//! eviction tasks and the clusters failed over from (across reconciles, on a paused clock).

use std::time::Duration;

use flotilla_apis::conditions::{self, Set};
use flotilla_apis::policy::v1alpha1::{
    ClusterFailoverBehavior, FailoverBehavior, Placement, PurgeMode,
};
use flotilla_apis::work::v1alpha1::{
    FailedOverCluster, GracefulEvictionTask, ObjectReference, ResourceBindingSpec,
    ResourceBindingStatus, TargetCluster, CONDITION_SCHEDULED, REASON_BINDING_SCHEDULED,
    REASON_NO_CLUSTER_FIT, REASON_UNSCHEDULABLE,
};
use flotilla_scheduler::assign::Assignment;
use flotilla_scheduler::{ClusterVerdict, Decision, Outcome};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::json;

use super::plan::{eviction_tasks, placement_patch, status_condition, SpecWrite};
use super::*;

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_772_366_400 + secs).expect("a time")
}

fn target(name: &str, replicas: i32) -> TargetCluster {
    TargetCluster {
        name: name.to_owned(),
        replicas,
    }
}

fn decided(clusters: &[(&str, u32)]) -> Decision {
    Decision {
        clusters: clusters
            .iter()
            .map(|(c, r)| Assignment {
                cluster: (*c).to_owned(),
                replicas: *r,
            })
            .collect(),
        ..Decision::default()
    }
}

fn failed(error: &str, outcomes: &[Outcome]) -> Decision {
    Decision {
        error: Some(error.to_owned()),
        explanation: outcomes
            .iter()
            .enumerate()
            .map(|(i, o)| ClusterVerdict {
                cluster: format!("m{i}"),
                outcome: *o,
                filtered: None,
                score: None,
                replicas: None,
            })
            .collect(),
        ..Decision::default()
    }
}

fn spec(clusters: Vec<TargetCluster>, tasks: Vec<GracefulEvictionTask>) -> ResourceBindingSpec {
    ResourceBindingSpec {
        resource: ObjectReference {
            api_version: "apps/v1".to_owned(),
            kind: "Deployment".to_owned(),
            name: "web".to_owned(),
            ..ObjectReference::default()
        },
        replicas: 3,
        placement: Some(Placement::default()),
        clusters,
        graceful_eviction_tasks: tasks,
        ..ResourceBindingSpec::default()
    }
}

fn ours(cluster: &str, began: Timestamp) -> GracefulEvictionTask {
    eviction_tasks(
        &spec(vec![], vec![]),
        &[],
        &[(cluster.to_owned(), 2)],
        began,
    )
    .remove(0)
}

#[test]
fn the_request_carries_replicas_for_kinds_that_have_them() {
    let s = spec(vec![target("a", 2), target("b", -1)], vec![]);
    let req = request(&s, None).expect("a placement");
    assert_eq!(req.gvk, ("apps", "v1", "Deployment"));
    assert_eq!(req.replicas, Some(3));
    assert_eq!(req.current, vec![("a".to_owned(), 2), ("b".to_owned(), 0)]);
    assert!(!req.rebalance);
    let config_map = ResourceBindingSpec {
        resource: ObjectReference {
            api_version: "v1".to_owned(),
            kind: "ConfigMap".to_owned(),
            ..ObjectReference::default()
        },
        replicas: 0,
        ..s.clone()
    };
    let req = request(&config_map, None).expect("a placement");
    assert_eq!((req.gvk, req.replicas), (("", "v1", "ConfigMap"), None));
    // A kind without compiled rules whose ResourceInterpreter read replicas (the detector
    // wrote them into the binding) has them divided.
    let clone_set = ResourceBindingSpec {
        resource: ObjectReference {
            api_version: "apps.kruise.io/v1alpha1".to_owned(),
            kind: "CloneSet".to_owned(),
            ..ObjectReference::default()
        },
        replicas: 6,
        ..s.clone()
    };
    let req = request(&clone_set, None).expect("a placement");
    assert_eq!(req.replicas, Some(6));
    // Attached to workloads, no placement: not the scheduler's.
    let attached = ResourceBindingSpec {
        placement: None,
        ..s
    };
    assert!(request(&attached, None).is_none());
}

#[test]
fn a_placement_change_divides_afresh() {
    let s = spec(vec![], vec![]);
    let hash = placement_hash(&s);
    let mut other = s.clone();
    other.placement = Some(
        serde_json::from_value(json!({"clusterAffinity": {"clusterNames": ["a"]}}))
            .expect("a placement"),
    );
    assert_ne!(placement_hash(&other), hash);
    // (remembered hash, rebalance?)
    let cases = [
        (None, false),
        (Some(hash.clone()), false),
        (Some(placement_hash(&other)), true),
    ];
    for (last, want) in cases {
        assert_eq!(rebalance(last.as_deref(), &hash), want, "{last:?}");
    }
}

#[test]
fn the_spec_is_written_when_clusters_tasks_or_the_placement_change() {
    let s = spec(vec![target("a", 2), target("b", 1)], vec![]);
    let hash = placement_hash(&s);
    let now = at(0);
    let same = decided(&[("a", 2), ("b", 1)]);
    let moved = decided(&[("a", 3)]);
    // (decision, evicted, remembered hash, write?, moved?)
    let cases = [
        (same.clone(), vec![], Some(hash.as_str()), false, false),
        // Only the hash is remembered (a binding from before the annotation).
        (same.clone(), vec![], None, true, false),
        (
            same,
            vec![("c".to_owned(), 1)],
            Some(hash.as_str()),
            true,
            true,
        ),
        (moved, vec![], Some(hash.as_str()), true, true),
        (failed("no", &[]), vec![], None, false, false),
    ];
    for (decision, evicted, last, write, want_moved) in cases {
        let got = spec_write(&s, &decision, &evicted, now, last, &hash);
        assert_eq!(got.is_some(), write, "{decision:?} {last:?}");
        if let Some(w) = got {
            assert_eq!(w.moved, want_moved, "{decision:?}");
            let names: Vec<&str> = w.chosen.iter().map(|t| t.name.as_str()).collect();
            let want: Vec<&str> = decision
                .clusters
                .iter()
                .map(|a| a.cluster.as_str())
                .collect();
            assert_eq!(names, want);
        }
    }
}

#[test]
fn evicted_clusters_get_a_task_unless_purged_directly() {
    let now = at(0);
    let old = ours("old", at(-60));
    let s = spec(vec![target("a", 3)], vec![old.clone()]);
    let evicted = [("b".to_owned(), 2), ("old".to_owned(), 1)];
    let tasks = eviction_tasks(&s, &[target("a", 3)], &evicted, now);
    assert_eq!(tasks.len(), 2);
    assert_eq!(tasks[0], old, "a running task keeps its start");
    let b = &tasks[1];
    assert_eq!(
        (b.from_cluster.as_str(), b.replicas, b.reason.as_str()),
        ("b", Some(2), REASON_TAINT_UNTOLERATED)
    );
    assert_eq!(
        (b.producer.as_str(), &b.creation_timestamp),
        (MANAGER, &Some(Time(now)))
    );
    // A kind without replicas: the whole object, no count.
    let whole = eviction_tasks(&s, &[], &[("c".to_owned(), 0)], now);
    assert_eq!(whole[1].replicas, None);
    // Placed again (failback): the task is done.
    assert_eq!(eviction_tasks(&s, &[target("old", 1)], &[], now), vec![]);
    // purgeMode Directly: no new task.
    let directly = ResourceBindingSpec {
        failover: Some(FailoverBehavior {
            cluster: Some(ClusterFailoverBehavior {
                purge_mode: PurgeMode::Directly,
            }),
        }),
        ..s
    };
    assert_eq!(eviction_tasks(&directly, &[], &evicted, now), vec![old]);
}

#[test]
fn scheduled_condition_by_outcome() {
    let cases = [
        (
            decided(&[("a", 1), ("b", 2)]),
            (REASON_BINDING_SCHEDULED, "placed in 2 cluster(s)", "True"),
        ),
        (
            failed("no cluster fits", &[Outcome::Filtered, Outcome::Filtered]),
            (REASON_NO_CLUSTER_FIT, "no cluster fits", "False"),
        ),
        (
            failed("spread", &[Outcome::Filtered, Outcome::NotSelected]),
            (REASON_UNSCHEDULABLE, "spread", "False"),
        ),
    ];
    for (decision, (reason, message, state)) in cases {
        assert_eq!(
            status_condition(&decision),
            (reason.to_owned(), message.to_owned(), state),
            "{decision:?}"
        );
    }
}

#[test]
fn the_status_is_written_only_when_it_changes() {
    let now = at(0);
    let decision = decided(&[("a", 3)]);
    let written = status_write(None, &decision, 4, &[], now).expect("a first status");
    assert_eq!(written["schedulerObservedGeneration"], json!(4));
    assert_eq!(written["lastScheduledTime"], json!(Time(now)));
    assert_eq!(written["conditions"][0]["type"], json!(CONDITION_SCHEDULED));
    let mut conds = Vec::new();
    conditions::set(
        &mut conds,
        Set {
            type_: CONDITION_SCHEDULED,
            status: "True",
            reason: REASON_BINDING_SCHEDULED,
            message: "placed in 1 cluster(s)",
        },
        at(-60),
    );
    let current = ResourceBindingStatus {
        scheduler_observed_generation: Some(4),
        conditions: conds,
        ..ResourceBindingStatus::default()
    };
    assert_eq!(status_write(Some(&current), &decision, 4, &[], now), None);
    let gone = FailedOverCluster {
        name: "b".to_owned(),
        since: Time(now),
    };
    let affinity = Decision {
        affinity_name: Some("primary".to_owned()),
        ..decision.clone()
    };
    // (decision, generation, failed over): each change is written.
    let cases = [
        (decision.clone(), 5, vec![]),
        (decision.clone(), 4, vec![gone]),
        (affinity, 4, vec![]),
        (failed("no", &[Outcome::Filtered]), 4, vec![]),
    ];
    for (d, generation, failed_over) in cases {
        let w = status_write(Some(&current), &d, generation, &failed_over, now);
        let w = w.expect("a change");
        assert_eq!(
            w.get("lastScheduledTime").is_some(),
            d.error.is_none(),
            "{d:?}"
        );
        assert_eq!(
            w.get("schedulerObservingAffinityName").cloned(),
            d.affinity_name.map(|a| json!(a))
        );
    }
}

/// Reconciles of a binding whose cluster `b` is evicted, then comes back: `b` is failed over
/// from since the first eviction (not since each later look), and forgotten once placed
/// again or unregistered.
#[tokio::test(start_paused = true)]
async fn failed_over_since_the_first_eviction() {
    let start = tokio::time::Instant::now();
    let now = || {
        at(0)
            .checked_add(SignedDuration::try_from(start.elapsed()).expect("short"))
            .expect("in range")
    };
    let registered = ["a".to_owned(), "b".to_owned()];
    let only_a = decided(&[("a", 3)]);
    let evicted = [("b".to_owned(), 2)];
    let first = failed_over(&[], &registered, &only_a, &evicted, &[], now());
    assert_eq!(
        first,
        vec![FailedOverCluster {
            name: "b".to_owned(),
            since: Time(at(0)),
        }]
    );
    tokio::time::sleep(Duration::from_secs(90)).await;
    // Later looks: the eviction is a task now, not a fresh eviction.
    let task = ours("b", at(0));
    let later = failed_over(
        &first,
        &registered,
        &only_a,
        &[],
        std::slice::from_ref(&task),
        now(),
    );
    assert_eq!(later, first);
    // A task of another producer does not count.
    let foreign = GracefulEvictionTask {
        producer: "someone".to_owned(),
        ..task.clone()
    };
    assert_eq!(
        failed_over(&[], &registered, &only_a, &[], &[foreign], now()),
        vec![]
    );
    // Placed again, or no longer registered: forgotten.
    let both = decided(&[("a", 2), ("b", 1)]);
    assert_eq!(
        failed_over(&later, &registered, &both, &[], &[], now()),
        vec![]
    );
    assert_eq!(
        failed_over(&later, &registered[..1], &only_a, &[], &[], now()),
        vec![]
    );
    // The task's own lifetime is measured from its start, not from the last look.
    let s = spec(vec![target("a", 3)], vec![task.clone()]);
    let tasks = eviction_tasks(&s, &[target("a", 3)], &evicted, now());
    assert_eq!(tasks, vec![task]);
}

/// Applies the placement patch to `binding` as a JSON patch.
fn patched(
    binding: &serde_json::Value,
    patch: serde_json::Value,
) -> Result<serde_json::Value, String> {
    let patch: json_patch::Patch = serde_json::from_value(patch).expect("a JSON patch");
    let mut doc = binding.clone();
    json_patch::patch(&mut doc, &patch).map_err(|e| e.to_string())?;
    Ok(doc)
}

#[test]
fn the_placement_is_patched_only_onto_the_generation_it_was_decided_for() {
    let write = SpecWrite {
        chosen: vec![target("m-1", 2), target("m-2", 1)],
        tasks: vec![ours("m-3", at(0))],
        moved: true,
    };
    let binding = json!({
        "metadata": {"name": "b", "generation": 3, "resourceVersion": "40",
                     "annotations": {"other": "kept"}},
        "spec": {"clusters": [{"name": "m-3", "replicas": 3}]},
        "status": {"aggregatedStatus": []},
    });
    let patch = placement_patch(3, true, false, "h1", &write);
    let out = patched(&binding, patch.clone()).expect("applies on generation 3");
    assert_eq!(out["spec"]["clusters"], json!(write.chosen));
    assert_eq!(out["spec"]["gracefulEvictionTasks"], json!(write.tasks));
    assert_eq!(out["metadata"]["annotations"]["other"], "kept");
    assert_eq!(
        out["metadata"]["annotations"][PLACEMENT_HASH_ANNOTATION],
        "h1"
    );
    // Another controller's status or metadata write moved the resourceVersion only: applies.
    let mut touched = binding.clone();
    touched["metadata"]["resourceVersion"] = json!("41");
    touched["metadata"]["finalizers"] = json!(["work.flotilla.io/binding-cleanup"]);
    assert!(patched(&touched, patch.clone()).is_ok());
    // The spec changed: refused.
    let mut changed = binding.clone();
    changed["metadata"]["generation"] = json!(4);
    assert!(patched(&changed, patch).is_err());
}

#[test]
fn the_placement_patch_adds_annotations_and_removes_finished_tasks() {
    let write = SpecWrite {
        chosen: vec![target("m-1", 3)],
        tasks: vec![],
        moved: true,
    };
    let binding = json!({
        "metadata": {"name": "b", "generation": 5},
        "spec": {"clusters": [], "gracefulEvictionTasks": [{"fromCluster": "m-2"}]},
    });
    let out = patched(&binding, placement_patch(5, false, true, "h2", &write)).expect("applies");
    assert_eq!(
        out["metadata"]["annotations"],
        json!({PLACEMENT_HASH_ANNOTATION: "h2"})
    );
    assert!(out["spec"].get("gracefulEvictionTasks").is_none());
    // Without tasks before or after, nothing is removed (removing a missing field would fail).
    let bare = json!({"metadata": {"generation": 5, "annotations": {}}, "spec": {}});
    assert!(patched(&bare, placement_patch(5, true, false, "h2", &write)).is_ok());
}
