//! The binding controller's decisions, from plain values (rendering the Works: in
//! `render/tests.rs`): whether to go on, what the binding's status says, the finalizer, when
//! eviction tasks end (on a paused clock).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use flotilla_apis::names::execution_namespace;
use flotilla_apis::policy::v1alpha1::Placement;
use flotilla_apis::work::v1alpha1::{
    AggregatedStatusItem, GracefulEvictionTask, ObjectReference, ResourceBindingSpec,
    ResourceBindingStatus, Work,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::runtime::controller::Action;
use serde_json::{json, Value};

use super::deletion::finalizers_to_write;
use super::eviction::{pending_tasks, replacement_ready, replacement_targets, Progress};
use super::render::Wrote;
use super::status::{fully_applied, summarize};
use super::*;
use crate::propagation::feed::requeue_at;
use crate::render::ReplicaShare;

/// A Work of binding `web` in `cluster`'s execution namespace, with `extra` merged over it.
pub(super) fn work(cluster: &str, extra: Value) -> Arc<Work> {
    let mut v = json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": "Work",
        "metadata": {"name": "shop.web-deployment", "namespace": execution_namespace(cluster)},
        "spec": {"manifests": [{"kind": "Deployment", "spec": {"replicas": 2}}]},
    });
    json_patch::merge(&mut v, &extra);
    Arc::new(serde_json::from_value(v).expect("a Work"))
}

pub(super) fn task(cluster: &str) -> GracefulEvictionTask {
    GracefulEvictionTask {
        from_cluster: cluster.to_owned(),
        ..GracefulEvictionTask::default()
    }
}

#[test]
fn works_wait_for_the_scheduler_and_for_the_right_object() {
    let spec = |placement: bool, uid: Option<&str>| ResourceBindingSpec {
        placement: placement.then(Placement::default),
        resource: ObjectReference {
            uid: uid.map(str::to_owned),
            ..ObjectReference::default()
        },
        ..ResourceBindingSpec::default()
    };
    let observed = |g: i64| ResourceBindingStatus {
        scheduler_observed_generation: Some(g),
        ..ResourceBindingStatus::default()
    };
    // (spec, generation, status, placed?)
    let cases = [
        (spec(true, None), Some(2), Some(observed(2)), true),
        (spec(true, None), Some(3), Some(observed(2)), false),
        (spec(true, None), Some(1), None, false),
        // Attached to workloads: not the scheduler's.
        (spec(false, None), Some(3), None, true),
    ];
    for (spec, generation, status, want) in cases {
        assert_eq!(
            placed(&spec, generation, status.as_ref()),
            want,
            "{generation:?} {status:?}"
        );
    }
    let template = json!({"metadata": {"uid": "u1"}});
    assert!(same_object(&spec(true, None), &template));
    assert!(same_object(&spec(true, Some("u1")), &template));
    assert!(!same_object(&spec(true, Some("u0")), &template));
}

#[test]
fn current_replicas_of_each_cluster() {
    let works = vec![
        work("a", json!({})),
        work("b", json!({"spec": {"manifests": [{"kind": "ConfigMap"}]}})),
    ];
    assert_eq!(
        current_replicas(&works),
        HashMap::from([("a".to_owned(), 2)])
    );
}

fn applied(cluster: &str, generation: i64, observed: i64) -> Arc<Work> {
    work(
        cluster,
        json!({
            "metadata": {"generation": generation},
            "status": {
                "conditions": [{"type": "Applied", "status": "True", "reason": "Applied", "message": "",
                    "observedGeneration": observed, "lastTransitionTime": "2026-03-01T12:00:00Z"}],
                "manifestStatuses": [{
                    "identifier": {"ordinal": 0, "group": "apps", "version": "v1", "kind": "Deployment",
                        "resource": "deployments", "namespace": "shop", "name": "web"},
                    "conditions": [{"type": "Applied", "status": "True", "reason": "Applied", "message": "",
                        "lastTransitionTime": "2026-03-01T12:00:00Z"}],
                }],
            },
        }),
    )
}

#[test]
fn binding_status_per_target_cluster() {
    let works = vec![applied("a", 2, 2), applied("b", 3, 2), work("c", json!({}))];
    let t = ["a", "b", "c", "d", "e"].map(str::to_owned);
    let mut wrote = Wrote {
        failures: HashMap::from([("e".to_owned(), "the cluster is not registered".to_owned())]),
        ..Wrote::default()
    };
    let (items, members) = summarize(&t, &works, &wrote);
    let row =
        |i: &AggregatedStatusItem| (i.cluster_name.clone(), i.applied, i.applied_message.clone());
    let not_yet = Some("not yet applied in the member".to_owned());
    assert_eq!(
        items.iter().map(row).collect::<Vec<_>>(),
        vec![
            ("a".to_owned(), true, None),
            ("b".to_owned(), true, None),
            ("c".to_owned(), false, not_yet.clone()),
            ("d".to_owned(), false, not_yet),
            (
                "e".to_owned(),
                false,
                Some("the cluster is not registered".to_owned())
            ),
        ]
    );
    // Up to date: the Work's generation applied, and the member reported on it.
    let up: Vec<(&str, bool)> = members.iter().map(|(c, _, up)| (c.as_str(), *up)).collect();
    assert_eq!(
        up,
        vec![
            ("a", true),
            ("b", false),
            ("c", false),
            ("d", false),
            ("e", false)
        ]
    );
    // A Work rewritten by this reconcile: its member's report is of the content before, so
    // the template's observedGeneration must wait for the next one.
    wrote.rewritten.insert("a".to_owned());
    let (items, members) = summarize(&t, &works, &wrote);
    assert!(items[0].applied, "still applied, as reported");
    assert_eq!((members[0].0.as_str(), members[0].2), ("a", false));
}

#[test]
fn fully_applied_says_which_clusters_are_missing() {
    let item = |c: &str, applied: bool| AggregatedStatusItem {
        cluster_name: c.to_owned(),
        applied,
        ..AggregatedStatusItem::default()
    };
    let cases = [
        (vec![], false, "not scheduled to any cluster"),
        (
            vec![item("a", true), item("b", true)],
            true,
            "applied in every scheduled cluster",
        ),
        (
            vec![item("a", false), item("b", true), item("c", false)],
            false,
            "not yet applied in a, c",
        ),
    ];
    for (items, all, message) in cases {
        assert_eq!(
            fully_applied(&items),
            (all, message.to_owned()),
            "{items:?}"
        );
    }
}

#[test]
fn finalizer_is_added_and_removed_once() {
    let f = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    let cases = [
        (f(&[]), true, Some(f(&[BINDING_FINALIZER]))),
        (f(&["other"]), true, Some(f(&["other", BINDING_FINALIZER]))),
        (f(&[BINDING_FINALIZER]), true, None),
        (f(&[BINDING_FINALIZER, "other"]), false, Some(f(&["other"]))),
        (f(&["other"]), false, None),
    ];
    for (before, on, want) in cases {
        assert_eq!(finalizers_to_write(&before, on), want, "{before:?} {on}");
    }
}

#[test]
fn the_replacement_counts_the_shares_each_target_should_run() {
    let up = Progress {
        applied: true,
        healthy: true,
        ready: Some(3),
    };
    let progress = HashMap::from([("a".to_owned(), up)]);
    let wanted = HashMap::from([
        ("a".to_owned(), ReplicaShare::Replicas(3)),
        ("b".to_owned(), ReplicaShare::Replicas(2)),
    ]);
    let t = ["a", "b", "c"].map(str::to_owned);
    assert_eq!(
        replacement_targets(&t, &wanted, &progress, 5),
        vec![
            (up, Some(3)),
            (Progress::default(), Some(2)),
            // No share: the binding's replicas.
            (Progress::default(), Some(5)),
        ]
    );
    assert!(!replacement_ready(&replacement_targets(
        &t, &wanted, &progress, 5
    )));
}

/// The controller's loop over an eviction task whose replacement never comes up: it is kept,
/// with a wake-up just after its grace period, and ends when that wake-up comes.
#[tokio::test(start_paused = true)]
async fn an_eviction_ends_when_its_requeue_fires() {
    let began = Timestamp::from_second(1_772_366_400).expect("a time");
    let task = GracefulEvictionTask {
        grace_period_seconds: Some(30),
        creation_timestamp: Some(Time(began)),
        ..task("gone")
    };
    let targets = ["a".to_owned()];
    let start = tokio::time::Instant::now();
    let now = |started: tokio::time::Instant| {
        began
            .checked_add(SignedDuration::try_from(started.elapsed()).expect("short"))
            .expect("in range")
    };
    let (keep, next) = pending_tasks(
        std::slice::from_ref(&task),
        &targets,
        false,
        now(start),
        Duration::from_secs(600),
    );
    assert_eq!(keep, vec![task.clone()]);
    let action = requeue_at(next, now(start));
    assert_eq!(action, Action::requeue(Duration::from_millis(30_200)));
    // Just before the wake-up nothing changes; at it the task is done.
    tokio::time::sleep(Duration::from_secs(29)).await;
    let (keep, _) = pending_tasks(
        std::slice::from_ref(&task),
        &targets,
        false,
        now(start),
        Duration::from_secs(600),
    );
    assert_eq!(keep.len(), 1);
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    let (keep, next) = pending_tasks(
        std::slice::from_ref(&task),
        &targets,
        false,
        now(start),
        Duration::from_secs(600),
    );
    assert_eq!((keep, next), (vec![], None));
    assert_eq!(requeue_at(None, now(start)), Action::await_change());
    // A wake-up already due comes at once (plus the margin).
    assert_eq!(
        requeue_at(Some(began), now(start)),
        Action::requeue(Duration::from_millis(200))
    );
}
