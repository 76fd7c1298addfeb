//! Rendering a binding's Works, from plain values: the target clusters, which Works leave,
//! the Work each cluster should have, and when a Work is written again.

use std::collections::HashMap;
use std::sync::Arc;

use flotilla_apis::cluster::v1alpha1::{Cluster, ClusterSpec};
use flotilla_apis::names::execution_namespace;
use flotilla_apis::policy::v1alpha1::{ConflictResolution, Placement};
use flotilla_apis::work::v1alpha1::{BindingSnapshot, ResourceBindingSpec, TargetCluster, Work};
use serde_json::{json, Value};

use super::super::tests::{task, work};
use super::*;

fn target(name: &str, replicas: i32) -> TargetCluster {
    TargetCluster {
        name: name.to_owned(),
        replicas,
    }
}

fn snapshot(name: &str, clusters: &[&str]) -> BindingSnapshot {
    BindingSnapshot {
        namespace: Some("shop".to_owned()),
        name: name.to_owned(),
        clusters: clusters.iter().map(|c| target(c, 0)).collect(),
    }
}

fn deleting() -> Value {
    json!({"metadata": {"deletionTimestamp": "2026-03-01T12:00:00Z"}})
}

fn names(works: &[&Arc<Work>]) -> Vec<String> {
    works.iter().map(|w| cluster_of(w).to_owned()).collect()
}

#[test]
fn targets_are_the_placement_and_the_followed_workloads() {
    let placed = ResourceBindingSpec {
        placement: Some(Placement::default()),
        clusters: vec![target("b", 1), target("a", 2)],
        ..ResourceBindingSpec::default()
    };
    // (spec, targets): sorted, each once; clusters without a placement are not the binding's.
    let cases = [
        (placed.clone(), vec!["a", "b"]),
        (
            ResourceBindingSpec {
                clusters: vec![target("stale", 1)],
                required_by: vec![snapshot("web", &["c", "a"]), snapshot("api", &["a"])],
                ..ResourceBindingSpec::default()
            },
            vec!["a", "c"],
        ),
        (
            ResourceBindingSpec {
                required_by: vec![snapshot("web", &["c"])],
                ..placed
            },
            vec!["a", "b", "c"],
        ),
        (ResourceBindingSpec::default(), vec![]),
    ];
    for (spec, want) in cases {
        assert_eq!(targets(&spec), want, "{spec:?}");
    }
}

#[test]
fn works_of_clusters_left_go_unless_an_eviction_keeps_them() {
    let works = vec![
        work("a", json!({})),
        work("b", json!({})),
        work("c", json!({})),
        work("d", deleting()),
    ];
    let t = |names: &[&str]| names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
    // (targets, eviction tasks, Works deleted)
    let cases = [
        (t(&["a", "b", "c"]), vec![], vec![]),
        (t(&["a"]), vec![], vec!["b", "c"]),
        (t(&["a"]), vec![task("b")], vec!["c"]),
        (t(&[]), vec![task("a"), task("b"), task("c")], vec![]),
        // Not a Work being deleted already.
        (t(&[]), vec![], vec!["a", "b", "c"]),
    ];
    for (targets, tasks, want) in cases {
        assert_eq!(
            names(&leaving(&works, &targets, &tasks)),
            want,
            "{targets:?} {tasks:?}"
        );
    }
}

fn body(cluster: &str, replicas: i64, conflict: ConflictResolution, orphan: bool) -> Value {
    work_body(
        Some("shop"),
        "web-deployment",
        "label",
        cluster,
        json!({"kind": "Deployment", "spec": {"replicas": replicas}}),
        conflict,
        orphan,
    )
}

#[test]
fn work_body_names_its_binding_and_hashes_its_content() {
    let b = body("a", 2, ConflictResolution::Abort, false);
    assert_eq!(b["metadata"]["namespace"], json!(execution_namespace("a")));
    assert_eq!(
        b["metadata"]["name"],
        json!(work_name(Some("shop"), "web-deployment"))
    );
    assert_eq!(b["metadata"]["labels"][BINDING_LABEL], json!("label"));
    let a = &b["metadata"]["annotations"];
    assert_eq!(a[BINDING_NAME_ANNOTATION], json!("web-deployment"));
    assert_eq!(a[BINDING_NAMESPACE_ANNOTATION], json!("shop"));
    assert_eq!(b["spec"]["deletePolicy"], json!("Delete"));
    assert_eq!(
        body("a", 2, ConflictResolution::Abort, true)["spec"]["deletePolicy"],
        json!("Orphan")
    );
    // Same input, same hash; any change of content, another.
    let hash = |b: &Value| b["metadata"]["annotations"][RENDER_HASH_ANNOTATION].clone();
    assert_eq!(
        hash(&b),
        hash(&body("a", 2, ConflictResolution::Abort, false))
    );
    for other in [
        body("b", 2, ConflictResolution::Abort, false),
        body("a", 3, ConflictResolution::Abort, false),
        body("a", 2, ConflictResolution::Overwrite, false),
        body("a", 2, ConflictResolution::Abort, true),
    ] {
        assert_ne!(hash(&b), hash(&other));
    }
    // A ClusterResourceBinding's Works name no namespace.
    let cluster_scoped = work_body(
        None,
        "web-deployment",
        "label",
        "a",
        json!({}),
        ConflictResolution::Abort,
        false,
    );
    assert!(cluster_scoped["metadata"]["annotations"]
        .get(BINDING_NAMESPACE_ANNOTATION)
        .is_none());
}

#[test]
fn the_works_a_binding_should_have() {
    let template = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "resourceVersion": "9"},
        "spec": {"replicas": 3},
        "status": {"replicas": 3},
    });
    let registered =
        |c: &str| (c != "missing").then(|| Arc::new(Cluster::new(c, ClusterSpec::default())));
    let shares = HashMap::from([
        ("a".to_owned(), ReplicaShare::Replicas(2)),
        ("b".to_owned(), ReplicaShare::Replicas(1)),
    ]);
    let t = ["a", "b", "missing"].map(str::to_owned);
    let owner = |ns| Owner {
        ns,
        name: "web-deployment",
        label: "label",
        conflict: ConflictResolution::Abort,
        orphan: false,
        revision: None,
        plural: None,
    };
    let plan = planned_works(
        &owner(Some("shop")),
        &template,
        &t,
        registered,
        &[],
        &shares,
        None,
    );
    let clusters: Vec<&str> = plan.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(clusters, ["a", "b", "missing"]);
    for (cluster, replicas) in [("a", 2), ("b", 1)] {
        let (_, body) = plan.iter().find(|(c, _)| c == cluster).expect("planned");
        let body = body.as_ref().expect("a Work");
        assert_eq!(*body, body_of(cluster, &body["spec"]["manifests"][0]));
        let manifest = &body["spec"]["manifests"][0];
        assert_eq!(manifest["spec"]["replicas"], json!(replicas));
        // Hub fields stripped.
        assert!(manifest.get("status").is_none());
        assert!(manifest["metadata"].get("uid").is_none());
    }
    assert_eq!(plan[2].1, Err("the cluster is not registered".to_owned()));
    // A ResourceBinding of another namespace gets no Work for this object.
    let plan = planned_works(
        &owner(Some("other")),
        &template,
        &t[..1],
        registered,
        &[],
        &shares,
        None,
    );
    let why = plan[0].1.as_ref().expect_err("refused");
    assert!(why.contains("not in namespace other"), "{why}");
}

fn body_of(cluster: &str, manifest: &Value) -> Value {
    work_body(
        Some("shop"),
        "web-deployment",
        "label",
        cluster,
        manifest.clone(),
        ConflictResolution::Abort,
        false,
    )
}

#[test]
fn a_work_is_written_only_when_its_content_changed() {
    let b = body("a", 2, ConflictResolution::Abort, false);
    let hash = b["metadata"]["annotations"][RENDER_HASH_ANNOTATION].clone();
    let same = work(
        "a",
        json!({"metadata": {"annotations": {RENDER_HASH_ANNOTATION: hash}}}),
    );
    let other = work(
        "a",
        json!({"metadata": {"annotations": {RENDER_HASH_ANNOTATION: "0"}}}),
    );
    assert!(written(Some(&same), &b));
    assert!(!written(Some(&other), &b));
    assert!(!written(Some(&work("a", json!({}))), &b));
    assert!(!written(None, &b));
}
