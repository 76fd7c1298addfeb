//! The dependencies distributor's decisions, from plain values: which workloads follow their
//! dependencies, what an attached binding forgets and a workload releases, the attached
//! binding's body and the writes to its `requiredBy` list.

use std::sync::Arc;

use flotilla_apis::policy::v1alpha1::{ConflictResolution, Placement};
use flotilla_apis::work::v1alpha1::{BindingSnapshot, ResourceBinding, TargetCluster};
use serde_json::{json, Value};

use super::plan::{
    attached_binding, attached_to, follows, forgotten, list, released, required_by_write, snapshot,
    Write,
};
use super::references::{Dependency, CONFIG_MAP, SECRET};
use super::*;

fn binding(ns: &str, name: &str, extra: Value) -> ResourceBinding {
    let mut v = json!({
        "apiVersion": "work.flotilla.io/v1alpha1",
        "kind": "ResourceBinding",
        "metadata": {"name": name, "namespace": ns, "resourceVersion": "7"},
        "spec": {"resource": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}},
    });
    json_patch::merge(&mut v, &extra);
    serde_json::from_value(v).expect("a ResourceBinding")
}

fn by(name: &str, clusters: &[&str]) -> BindingSnapshot {
    BindingSnapshot {
        namespace: Some("shop".to_owned()),
        name: name.to_owned(),
        clusters: clusters
            .iter()
            .map(|c| TargetCluster {
                name: (*c).to_owned(),
                replicas: 1,
            })
            .collect(),
    }
}

fn dep(kind: &'static str, name: &str) -> Dependency {
    Dependency {
        kind,
        name: name.to_owned(),
    }
}

#[test]
fn dependencies_follow_scheduled_workloads_that_ask() {
    let scheduled = json!({"spec": {"clusters": [{"name": "a", "replicas": 1}]}});
    let asks = json!({"spec": {"propagateDeps": true}});
    let mut both = scheduled.clone();
    json_patch::merge(&mut both, &asks);
    let mut deleting = both.clone();
    json_patch::merge(
        &mut deleting,
        &json!({"metadata": {"deletionTimestamp": "2026-03-01T12:00:00Z", "finalizers": ["x"]}}),
    );
    // (binding, follows?)
    let cases = [
        (both, true),
        (scheduled, false),
        (asks, false),
        (deleting, false),
    ];
    for (extra, want) in cases {
        assert_eq!(
            follows(&binding("shop", "web", extra.clone())),
            want,
            "{extra}"
        );
    }
}

#[test]
fn attached_bindings_forget_workloads_gone_or_no_longer_asking() {
    let mut elsewhere = by("api", &["a"]);
    elsewhere.namespace = Some("other".to_owned());
    let required = vec![
        by("web", &["a"]),
        by("gone", &["a"]),
        elsewhere,
        by("quiet", &[]),
    ];
    let propagating =
        |ns: &str, name: &str| matches!((ns, name), ("shop", "web") | ("other", "api"));
    assert_eq!(
        forgotten(&required, "shop", propagating),
        vec!["gone".to_owned(), "quiet".to_owned()]
    );
    assert!(forgotten(&[], "shop", |_, _| false).is_empty());
}

#[test]
fn a_workloads_snapshot_and_the_bindings_that_list_it() {
    let web = binding(
        "shop",
        "web-deployment",
        json!({"spec": {"clusters": [{"name": "a", "replicas": 2}]}}),
    );
    let s = snapshot("shop", &web);
    assert_eq!(
        (s.namespace.as_deref(), s.name.as_str(), s.clusters.len()),
        (Some("shop"), "web-deployment", 1)
    );
    let listing = |ns: &str, name: &str, required: &[&str]| {
        let r: Vec<BindingSnapshot> = required.iter().map(|w| by(w, &[])).collect();
        Arc::new(binding(ns, name, json!({"spec": {"requiredBy": r}})))
    };
    let all = vec![
        listing("shop", "conf-configmap", &["web-deployment"]),
        listing("shop", "key-secret", &["api-deployment", "web-deployment"]),
        listing("shop", "other-configmap", &["api-deployment"]),
        listing("elsewhere", "conf-configmap", &["web-deployment"]),
    ];
    let attached = attached_to(all, "shop", "web-deployment");
    let names: Vec<String> = attached.iter().map(|a| a.name_any()).collect();
    assert_eq!(names, vec!["conf-configmap", "key-secret"]);
    // The workload still refers to the ConfigMap, no longer to the Secret.
    assert_eq!(
        released(&attached, &[dep(CONFIG_MAP, "conf")]),
        vec!["key-secret".to_owned()]
    );
    assert!(released(&attached, &[dep(CONFIG_MAP, "conf"), dep(SECRET, "key")]).is_empty());
}

#[test]
fn listing_a_workload_replaces_its_older_snapshot() {
    let mut required = vec![by("api", &["a"]), by("web", &["a"])];
    list(&mut required, &by("web", &["b"]));
    assert_eq!(required, vec![by("api", &["a"]), by("web", &["b"])]);
    list(&mut required, &by("batch", &["c"]));
    assert_eq!(required.len(), 3);
}

#[test]
fn the_attached_binding_of_a_dependency() {
    let body = attached_binding(
        "shop",
        &dep(SECRET, "key"),
        "u1",
        "42",
        &by("web-deployment", &["a"]),
        ConflictResolution::Overwrite,
    );
    let b: ResourceBinding = serde_json::from_value(body.clone()).expect("a ResourceBinding");
    assert_eq!(b.name_any(), "key-secret");
    assert_eq!(b.namespace().as_deref(), Some("shop"));
    assert_eq!(
        b.annotations()
            .get(DEPENDENCY_VERSION_ANNOTATION)
            .map(String::as_str),
        Some("42")
    );
    assert_eq!(
        body["metadata"]["ownerReferences"],
        json!([{"apiVersion": "v1", "kind": "Secret", "name": "key", "uid": "u1",
            "controller": true, "blockOwnerDeletion": true}])
    );
    assert_eq!(
        (
            b.spec.resource.kind.as_str(),
            b.spec.resource.uid.as_deref()
        ),
        ("Secret", Some("u1"))
    );
    assert!(b.spec.placement.is_none(), "no placement of its own");
    assert_eq!(b.spec.required_by, vec![by("web-deployment", &["a"])]);
    assert_eq!(b.spec.conflict_resolution, ConflictResolution::Overwrite);
}

#[test]
fn writes_to_the_required_by_list() {
    let required =
        |names: &[&str]| -> Vec<BindingSnapshot> { names.iter().map(|n| by(n, &[])).collect() };
    let attached = binding(
        "shop",
        "conf-configmap",
        json!({
            "metadata": {"annotations": {DEPENDENCY_VERSION_ANNOTATION: "1"}},
            "spec": {"requiredBy": required(&["api", "web"])},
        }),
    );
    let mut placed = attached.clone();
    placed.spec.placement = Some(Placement::default());
    let keep = |_: &mut Vec<BindingSnapshot>| {};
    let drop_all = |r: &mut Vec<BindingSnapshot>| r.clear();
    let add_batch = |r: &mut Vec<BindingSnapshot>| r.insert(0, by("batch", &[]));
    // Nothing changes: no write.
    assert_eq!(required_by_write(&attached, None, keep), Write::None);
    assert_eq!(required_by_write(&attached, Some("1"), keep), Write::None);
    // The list changes: a patch guarded by the version read, the list sorted.
    assert_eq!(
        required_by_write(&attached, None, add_batch),
        Write::Patch(json!({
            "metadata": {"resourceVersion": "7"},
            "spec": {"requiredBy": required(&["api", "batch", "web"])},
        }))
    );
    // The object changed: its new version is stamped.
    assert_eq!(
        required_by_write(&attached, Some("2"), keep),
        Write::Patch(json!({
            "metadata": {"resourceVersion": "7", "annotations": {DEPENDENCY_VERSION_ANNOTATION: "2"}},
            "spec": {"requiredBy": required(&["api", "web"])},
        }))
    );
    // No workload left: the binding goes, unless a policy places it too.
    assert_eq!(required_by_write(&attached, None, drop_all), Write::Delete);
    assert_eq!(
        required_by_write(&placed, None, drop_all),
        Write::Patch(json!({
            "metadata": {"resourceVersion": "7"},
            "spec": {"requiredBy": []},
        }))
    );
}

#[test]
fn an_interpreters_dependencies_are_followed_where_the_controller_can() {
    let named = |api: &str, kind: &str, ns: &str, name: &str| flotilla_interpreter::Dependency {
        api_version: api.into(),
        kind: kind.into(),
        namespace: ns.into(),
        name: name.into(),
    };
    let (followed, ignored) = super::interpreted(
        vec![
            named("v1", "Secret", "shop", "tls"),
            named("v1", "ConfigMap", "", "settings"),
            named("v1", "ConfigMap", "shop", "settings"),
            named("v1", "ConfigMap", "other", "theirs"),
            named("argoproj.io/v1alpha1", "AnalysisTemplate", "shop", "smoke"),
        ],
        "shop",
    );
    assert_eq!(
        followed,
        [
            Dependency {
                kind: CONFIG_MAP,
                name: "settings".into()
            },
            Dependency {
                kind: SECRET,
                name: "tls".into()
            },
        ]
    );
    assert_eq!(
        ignored,
        [
            "v1 ConfigMap other/theirs",
            "argoproj.io/v1alpha1 AnalysisTemplate shop/smoke"
        ]
    );
}
