//! The detector's decisions, from plain values: the binding it wants for an object, when the
//! binding it has is up to date, and which namespaces and kinds it looks at.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;

use flotilla_apis::policy::v1alpha1::{
    ClusterFailoverBehavior, ClusterPropagationPolicy, ConflictResolution, FailoverBehavior,
    PropagationPolicy, PropagationSpec, PurgeMode, ResourceSelector,
};
use flotilla_apis::work::v1alpha1::ResourceBinding;
use serde_json::{json, Value};

use super::desired::{named_kinds, own_group, unwatched, up_to_date};
use super::*;
use crate::propagation::binding::{ORPHAN_ANNOTATION, TEMPLATE_HASH_ANNOTATION};
use crate::propagation::select::Chosen;
use crate::propagation::workload::template_hash;

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
        "spec": {"replicas": 3, "template": {"spec": {"containers": [
            {"name": "web", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}}},
        ]}}},
    })
}

fn chosen(spec: &PropagationSpec) -> Chosen<'_> {
    Chosen {
        kind: "PropagationPolicy",
        namespace: Some("shop"),
        name: "web-policy",
        uid: Some("p1"),
        spec,
    }
}

fn hash(binding: &Value) -> &Value {
    &binding["metadata"]["annotations"][DETECTOR_HASH_ANNOTATION]
}

#[test]
fn the_binding_of_a_namespaced_workload() {
    let template = deployment();
    let spec = PropagationSpec::default();
    let b = desired(&template, true, &chosen(&spec));
    assert_eq!(b["kind"], json!("ResourceBinding"));
    assert_eq!(b["metadata"]["name"], json!("web-deployment"));
    assert_eq!(b["metadata"]["namespace"], json!("shop"));
    assert_eq!(
        b["metadata"]["ownerReferences"],
        json!([{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u1",
            "controller": true, "blockOwnerDeletion": true}])
    );
    assert_eq!(
        b["spec"]["resource"],
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "u1",
            "namespace": "shop"})
    );
    assert_eq!(b["spec"]["replicas"], json!(3));
    assert_eq!(
        b["spec"]["replicaRequirements"],
        json!({"resourceRequest": {"cpu": "250m", "memory": "67108864"}})
    );
    assert_eq!(
        b["spec"]["policyRef"],
        json!({"kind": "PropagationPolicy", "name": "web-policy", "uid": "p1", "namespace": "shop"})
    );
    assert_eq!(
        b["metadata"]["annotations"][TEMPLATE_HASH_ANNOTATION],
        json!(template_hash(&template))
    );
    assert!(b["metadata"]["annotations"]
        .get(ORPHAN_ANNOTATION)
        .is_none());
    assert!(b["spec"].get("propagateDeps").is_none());
    assert!(b["spec"].get("failover").is_none());
    // It deserializes as the binding it is.
    let typed: ResourceBinding = serde_json::from_value(b).expect("a ResourceBinding");
    assert_eq!(typed.spec.replicas, 3);
}

#[test]
fn the_binding_of_a_cluster_scoped_object() {
    let template = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "reader", "uid": "u2"},
    });
    let spec = PropagationSpec::default();
    let policy = Chosen {
        kind: "ClusterPropagationPolicy",
        namespace: None,
        ..chosen(&spec)
    };
    let b = desired(&template, false, &policy);
    assert_eq!(b["kind"], json!("ClusterResourceBinding"));
    assert_eq!(b["metadata"]["name"], json!("reader-clusterrole"));
    assert!(b["metadata"].get("namespace").is_none());
    assert!(b["spec"]["resource"].get("namespace").is_none());
    assert!(b["spec"]["policyRef"].get("namespace").is_none());
    assert!(b["spec"].get("replicas").is_none());
}

#[test]
fn policy_options_reach_the_binding() {
    let template = deployment();
    let mut orphaned = deployment();
    orphaned["metadata"]["annotations"] = json!({ORPHAN_ANNOTATION: "true"});
    let failover = FailoverBehavior {
        cluster: Some(ClusterFailoverBehavior {
            purge_mode: PurgeMode::Directly,
        }),
    };
    let plain = PropagationSpec::default();
    let preserve = PropagationSpec {
        preserve_resources_on_deletion: true,
        ..PropagationSpec::default()
    };
    let deps = PropagationSpec {
        propagate_deps: true,
        conflict_resolution: ConflictResolution::Overwrite,
        failover: Some(failover.clone()),
        ..PropagationSpec::default()
    };
    let orphan = |b: &Value| b["metadata"]["annotations"].get(ORPHAN_ANNOTATION).cloned();
    // (template, policy spec, orphan annotation)
    let cases = [
        (&template, &plain, None),
        (&orphaned, &plain, Some(json!("true"))),
        (&template, &preserve, Some(json!("true"))),
    ];
    for (t, spec, want) in cases {
        assert_eq!(orphan(&desired(t, true, &chosen(spec))), want, "{spec:?}");
    }
    let b = desired(&template, true, &chosen(&deps));
    assert_eq!(b["spec"]["propagateDeps"], json!(true));
    assert_eq!(b["spec"]["conflictResolution"], json!("Overwrite"));
    assert_eq!(b["spec"]["failover"], json!(failover));
}

#[test]
fn the_hash_follows_the_content() {
    let template = deployment();
    let spec = PropagationSpec::default();
    let b = desired(&template, true, &chosen(&spec));
    assert_eq!(hash(&b), hash(&desired(&template, true, &chosen(&spec))));
    let mut scaled = deployment();
    scaled["spec"]["replicas"] = json!(4);
    let mut relabelled = deployment();
    relabelled["metadata"]["labels"] = json!({"tier": "front"});
    let other_policy = PropagationSpec {
        priority: 1,
        propagate_deps: true,
        ..PropagationSpec::default()
    };
    for other in [
        desired(&scaled, true, &chosen(&spec)),
        // Any edit of the template changes its template hash, so the binding is rendered again.
        desired(&relabelled, true, &chosen(&spec)),
        desired(&template, true, &chosen(&other_policy)),
    ] {
        assert_ne!(hash(&b), hash(&other));
    }
}

#[test]
fn a_binding_is_written_unless_it_carries_the_same_hash() {
    let binding = |hash: Option<&str>| {
        let mut b = ResourceBinding::new("web-deployment", Default::default());
        if let Some(h) = hash {
            b.metadata.annotations =
                Some([(DETECTOR_HASH_ANNOTATION.to_owned(), h.to_owned())].into());
        }
        b
    };
    // (binding on the hub, up to date with hash "h1"?)
    let cases = [
        (None, false),
        (Some(binding(None)), false),
        (Some(binding(Some("h0"))), false),
        (Some(binding(Some("h1"))), true),
    ];
    for (current, want) in cases {
        assert_eq!(up_to_date(current.as_ref(), "h1"), want, "{current:?}");
    }
}

#[test]
fn objects_each_cluster_keeps_never_propagated() {
    let cases = [
        ("v1", "ConfigMap", Some("shop"), "kube-root-ca.crt", true),
        ("v1", "ConfigMap", Some("shop"), "app-config", false),
        ("v1", "ServiceAccount", Some("shop"), "default", true),
        ("v1", "ServiceAccount", Some("shop"), "runner", false),
        ("v1", "Service", Some("default"), "kubernetes", true),
        ("v1", "Service", Some("shop"), "kubernetes", false),
        ("v1", "Endpoints", Some("default"), "kubernetes", true),
        (
            "discovery.k8s.io/v1",
            "EndpointSlice",
            Some("default"),
            "kubernetes",
            true,
        ),
        (
            "apps/v1",
            "Deployment",
            Some("default"),
            "kubernetes",
            false,
        ),
    ];
    for (api_version, kind, ns, name, want) in cases {
        assert_eq!(
            kept_by_each_cluster(api_version, kind, ns, name),
            want,
            "{kind} {ns:?}/{name}"
        );
    }
}

#[test]
fn namespaces_and_groups_never_propagated() {
    let cases = [
        ("shop", false),
        ("default", false),
        ("kube-system", true),
        ("kube-public", true),
        ("kube-node-lease", true),
        (flotilla_apis::names::SYSTEM_NAMESPACE, true),
    ];
    for (ns, want) in cases {
        assert_eq!(excluded_namespace(ns), want, "{ns}");
    }
    let es = flotilla_apis::names::execution_namespace("member-1");
    assert!(excluded_namespace(&es));
    let groups = [
        ("v1", false),
        ("apps/v1", false),
        ("example.com/v1", false),
        ("work.flotilla.io/v1alpha1", true),
        ("policy.flotilla.io/v1alpha1", true),
    ];
    for (api_version, want) in groups {
        assert_eq!(own_group(api_version), want, "{api_version}");
    }
}

#[test]
fn the_kinds_policies_name_once_each() {
    let selector = |api_version: &str, kind: &str| ResourceSelector {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        ..ResourceSelector::default()
    };
    let spec = |selectors: Vec<ResourceSelector>| PropagationSpec {
        resource_selectors: selectors,
        ..PropagationSpec::default()
    };
    let policies = vec![Arc::new(PropagationPolicy::new(
        "p",
        spec(vec![
            selector("apps/v1", "Deployment"),
            selector("v1", "ConfigMap"),
        ]),
    ))];
    let cluster_policies = vec![Arc::new(ClusterPropagationPolicy::new(
        "c",
        spec(vec![
            selector("apps/v1", "Deployment"),
            selector("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ])
        .into(),
    ))];
    let want: BTreeSet<(String, String)> = [
        ("apps/v1", "Deployment"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("v1", "ConfigMap"),
    ]
    .iter()
    .map(|(a, k)| ((*a).to_owned(), (*k).to_owned()))
    .collect();
    assert_eq!(named_kinds(&policies, &cluster_policies), want);
    assert!(named_kinds(&[], &[]).is_empty());
}

#[test]
fn kinds_are_watched_once_and_never_flotillas_own() {
    let kind = |a: &str, k: &str| (a.to_owned(), k.to_owned());
    let named: BTreeSet<(String, String)> = [
        kind("apps/v1", "Deployment"),
        kind("v1", "ConfigMap"),
        kind("work.flotilla.io/v1alpha1", "Work"),
    ]
    .into();
    // (already watched, to start)
    let cases = [
        (
            vec![],
            vec![kind("apps/v1", "Deployment"), kind("v1", "ConfigMap")],
        ),
        (
            vec![kind("apps/v1", "Deployment")],
            vec![kind("v1", "ConfigMap")],
        ),
        (
            vec![kind("apps/v1", "Deployment"), kind("v1", "ConfigMap")],
            vec![],
        ),
    ];
    for (started, want) in cases {
        let started: HashSet<(String, String)> = started.into_iter().collect();
        assert_eq!(unwatched(named.clone(), &started), want, "{started:?}");
    }
}
