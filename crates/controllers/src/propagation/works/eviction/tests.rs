use std::collections::HashMap;
use std::time::Duration;

use flotilla_apis::work::v1alpha1::GracefulEvictionTask;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;

use super::*;

fn up(ready: u32) -> Progress {
    Progress {
        applied: true,
        healthy: true,
        ready: Some(ready),
    }
}

fn task(cluster: &str, began: Timestamp) -> GracefulEvictionTask {
    GracefulEvictionTask {
        from_cluster: cluster.into(),
        reason: "TaintUntolerated".into(),
        producer: "flotilla-scheduler".into(),
        creation_timestamp: Some(Time(began)),
        ..GracefulEvictionTask::default()
    }
}

fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

#[test]
fn replacement_is_ready_only_when_every_target_runs_its_replicas() {
    assert!(replacement_ready(&[(up(3), Some(3)), (up(3), Some(3))]));
    assert!(!replacement_ready(&[(up(3), Some(3)), (up(2), Some(3))]));
    assert!(
        !replacement_ready(&[]),
        "nothing replaces the copy when there is no target"
    );
    let unhealthy = Progress {
        healthy: false,
        ..up(3)
    };
    assert!(!replacement_ready(&[(unhealthy, Some(3))]));
    let not_applied = Progress::default();
    assert!(!replacement_ready(&[(not_applied, None)]));
    // Kinds without replicas: applied is enough.
    let applied = Progress {
        applied: true,
        healthy: true,
        ready: None,
    };
    assert!(replacement_ready(&[(applied, None)]));
}

#[test]
fn tasks_end_when_the_replacement_is_up_the_cluster_returns_or_time_runs_out() {
    let targets = vec!["member-1".to_owned(), "member-2".to_owned()];
    let grace = Duration::from_secs(600);
    let tasks = vec![task("member-3", at(0))];
    // Waiting: kept, and the deadline is when the grace period ends.
    let (keep, next) = pending_tasks(&tasks, &targets, false, at(10), grace);
    assert_eq!(keep, tasks);
    assert_eq!(next, Some(at(600)));
    // The replacement is ready: done.
    assert!(pending_tasks(&tasks, &targets, true, at(10), grace)
        .0
        .is_empty());
    // The grace period has passed: done even though the replacement is not up.
    assert!(pending_tasks(&tasks, &targets, false, at(600), grace)
        .0
        .is_empty());
    // The task's own grace period wins over the default.
    let mut short = task("member-3", at(0));
    short.grace_period_seconds = Some(30);
    let (keep, next) = pending_tasks(&[short], &targets, false, at(10), grace);
    assert_eq!(next, Some(at(30)));
    assert_eq!(keep.len(), 1);
    // Failback: the cluster is a target again.
    let back = vec!["member-3".to_owned()];
    assert!(pending_tasks(&tasks, &back, false, at(10), grace)
        .0
        .is_empty());
}

#[test]
fn suppressed_tasks_stay_until_cleared() {
    let mut t = task("member-3", at(0));
    t.suppress_deletion = Some(true);
    let targets = vec!["member-1".to_owned()];
    let (keep, next) = pending_tasks(
        std::slice::from_ref(&t),
        &targets,
        true,
        at(100_000),
        Duration::from_secs(60),
    );
    assert_eq!(keep, vec![t]);
    assert_eq!(next, None, "no deadline to wake up for");
}

fn replicas(pairs: &[(&str, u32)]) -> HashMap<String, ReplicaShare> {
    pairs
        .iter()
        .map(|(c, n)| (c.to_string(), ReplicaShare::Replicas(*n)))
        .collect()
}

#[test]
fn shrinking_clusters_wait_for_the_growing_ones() {
    // Failback: 3/3 on two clusters becomes 2/2/2 with member-3 back.
    let current: HashMap<String, u32> = [("member-1".into(), 3), ("member-2".into(), 3)].into();
    let mut progress: HashMap<String, Progress> =
        [("member-1".into(), up(3)), ("member-2".into(), up(3))].into();
    let mut shares = replicas(&[("member-1", 2), ("member-2", 2), ("member-3", 2)]);
    let held = hold_shrinking(&mut shares, &current, &progress);
    assert_eq!(held, vec!["member-1", "member-2"]);
    assert_eq!(shares["member-1"], ReplicaShare::Replicas(3));
    assert_eq!(shares["member-3"], ReplicaShare::Replicas(2));
    // member-3 applied but only one ready: still held.
    progress.insert("member-3".into(), up(1));
    let mut shares = replicas(&[("member-1", 2), ("member-2", 2), ("member-3", 2)]);
    assert_eq!(hold_shrinking(&mut shares, &current, &progress).len(), 2);
    // member-3 ready: the shrink goes ahead.
    progress.insert("member-3".into(), up(2));
    let mut shares = replicas(&[("member-1", 2), ("member-2", 2), ("member-3", 2)]);
    assert!(hold_shrinking(&mut shares, &current, &progress).is_empty());
    assert_eq!(shares["member-1"], ReplicaShare::Replicas(2));
}

#[test]
fn a_plain_scale_down_is_not_held() {
    let current: HashMap<String, u32> = [("a".into(), 3), ("b".into(), 3)].into();
    let progress: HashMap<String, Progress> = [("a".into(), up(3)), ("b".into(), up(3))].into();
    let mut shares = replicas(&[("a", 1), ("b", 1)]);
    assert!(hold_shrinking(&mut shares, &current, &progress).is_empty());
    assert_eq!(shares["a"], ReplicaShare::Replicas(1));
}

#[test]
fn a_scale_down_is_not_held_by_an_unready_cluster() {
    let current: HashMap<String, u32> = [("a".into(), 2), ("b".into(), 2), ("c".into(), 2)].into();
    let progress: HashMap<String, Progress> = [
        ("a".into(), up(2)),
        ("b".into(), up(2)),
        ("c".into(), up(0)),
    ]
    .into();
    let mut shares = replicas(&[("a", 1), ("b", 1), ("c", 1)]);
    assert!(hold_shrinking(&mut shares, &current, &progress).is_empty());
}
