use std::collections::BTreeMap;

use flotilla_apis::cluster::v1alpha1::{Cluster, ClusterSpec};
use flotilla_apis::policy::v1alpha1::{
    ClusterAffinity, FieldSelector, LabelAnnotationOverrider, OverriderOperator, Overriders,
    RuleWithCluster,
};
use k8s_openapi::api::core::v1::NodeSelectorRequirement;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use serde_json::json;

use super::*;

fn cluster(name: &str, labels: &[(&str, &str)], region: Option<&str>) -> Cluster {
    let mut c = Cluster::new(
        name,
        ClusterSpec {
            region: region.map(str::to_owned),
            ..ClusterSpec::default()
        },
    );
    c.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    c
}

fn set_label(key: &str, value: &str) -> Overriders {
    Overriders {
        labels_overrider: vec![LabelAnnotationOverrider {
            operator: OverriderOperator::Add,
            value: BTreeMap::from([(key.to_owned(), value.to_owned())]),
        }],
        ..Overriders::default()
    }
}

fn rule(target: Option<ClusterAffinity>, overriders: Overriders) -> RuleWithCluster {
    RuleWithCluster {
        target_cluster: target,
        overriders,
    }
}

fn requirement(key: &str, operator: &str, values: &[&str]) -> LabelSelectorRequirement {
    LabelSelectorRequirement {
        key: key.to_owned(),
        operator: operator.to_owned(),
        values: Some(values.iter().map(|s| s.to_string()).collect()),
    }
}

#[test]
fn target_cluster_selection() {
    let prod_eu = cluster("a", &[("env", "prod"), ("tier", "1")], Some("eu"));
    let dev_us = cluster("b", &[("env", "dev")], Some("us"));
    let names = |n: &[&str]| ClusterAffinity {
        cluster_names: n.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    let labels = |s: LabelSelector| ClusterAffinity {
        label_selector: Some(s),
        ..Default::default()
    };
    let fields = |op: &str, v: &[&str]| ClusterAffinity {
        field_selector: Some(FieldSelector {
            match_expressions: vec![NodeSelectorRequirement {
                key: "region".to_owned(),
                operator: op.to_owned(),
                values: Some(v.iter().map(|s| s.to_string()).collect()),
            }],
        }),
        ..Default::default()
    };
    let match_labels = |k: &str, v: &str| LabelSelector {
        match_labels: Some(BTreeMap::from([(k.to_owned(), v.to_owned())])),
        match_expressions: None,
    };
    let exprs = |r: LabelSelectorRequirement| LabelSelector {
        match_labels: None,
        match_expressions: Some(vec![r]),
    };
    // (name, affinity, selects a, selects b)
    let cases: Vec<(&str, ClusterAffinity, bool, bool)> = vec![
        ("empty selects all", ClusterAffinity::default(), true, true),
        ("by name", names(&["b"]), false, true),
        (
            "exclude wins",
            ClusterAffinity {
                exclude_clusters: vec!["b".into()],
                ..names(&["a", "b"])
            },
            true,
            false,
        ),
        (
            "matchLabels",
            labels(match_labels("env", "prod")),
            true,
            false,
        ),
        (
            "In",
            labels(exprs(requirement("env", "In", &["dev", "test"]))),
            false,
            true,
        ),
        (
            "NotIn (absent key too)",
            labels(exprs(requirement("tier", "NotIn", &["1"]))),
            false,
            true,
        ),
        (
            "Exists",
            labels(exprs(requirement("tier", "Exists", &[]))),
            true,
            false,
        ),
        (
            "DoesNotExist",
            labels(exprs(requirement("tier", "DoesNotExist", &[]))),
            false,
            true,
        ),
        (
            "unknown operator",
            labels(exprs(requirement("env", "Gt", &["1"]))),
            false,
            false,
        ),
        ("region In", fields("In", &["eu"]), true, false),
        ("region NotIn", fields("NotIn", &["eu"]), false, true),
        (
            "names and labels both",
            ClusterAffinity {
                label_selector: Some(match_labels("env", "dev")),
                ..names(&["a"])
            },
            false,
            false,
        ),
    ];
    for (name, affinity, a, b) in cases {
        assert_eq!(
            (
                affinity_selects(&affinity, &prod_eu),
                affinity_selects(&affinity, &dev_us)
            ),
            (a, b),
            "{name}"
        );
    }
}

#[test]
fn rules_in_order_cluster_scoped_first_then_by_name() {
    let only_b = ClusterAffinity {
        cluster_names: vec!["b".into()],
        ..Default::default()
    };
    let ns_z = [rule(None, set_label("x", "ns-z"))];
    let ns_a = [
        rule(None, set_label("x", "ns-a")),
        rule(Some(only_b), set_label("x", "ns-a-b")),
    ];
    let cl_z = [rule(None, set_label("x", "cl-z"))];
    let cl_a = [rule(None, set_label("x", "cl-a"))];
    let policies = [
        MatchedPolicy {
            scope: PolicyScope::Namespaced,
            name: "z",
            rules: &ns_z,
        },
        MatchedPolicy {
            scope: PolicyScope::Namespaced,
            name: "a",
            rules: &ns_a,
        },
        MatchedPolicy {
            scope: PolicyScope::Cluster,
            name: "z",
            rules: &cl_z,
        },
        MatchedPolicy {
            scope: PolicyScope::Cluster,
            name: "a",
            rules: &cl_a,
        },
    ];
    let order = |c: &Cluster| -> Vec<String> {
        rules_for_cluster(&policies, c)
            .iter()
            .map(|o| o.labels_overrider[0].value["x"].clone())
            .collect()
    };
    assert_eq!(
        order(&cluster("a", &[], None)),
        ["cl-a", "cl-z", "ns-a", "ns-z"]
    );
    assert_eq!(
        order(&cluster("b", &[], None)),
        ["cl-a", "cl-z", "ns-a", "ns-a-b", "ns-z"]
    );

    // Rendered in that order, the last namespaced rule wins.
    let c = cluster("b", &[], None);
    let template = json!({"kind": "ConfigMap", "metadata": {"name": "c"}});
    let out = render(&template, &c, None, None, &rules_for_cluster(&policies, &c)).unwrap();
    assert_eq!(out.pointer("/metadata/labels/x"), Some(&json!("ns-z")));
}

#[test]
fn render_strips_then_sets_replicas_then_overrides() {
    let c = cluster("a", &[], None);
    let template = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "uid": "u", "resourceVersion": "3"},
        "spec": {"replicas": 6}, "status": {"replicas": 6}});
    let bump = Overriders {
        plaintext: vec![flotilla_apis::policy::v1alpha1::PlaintextOverrider {
            path: "/metadata/labels".into(),
            operator: OverriderOperator::Add,
            value: Some(flotilla_apis::policy::v1alpha1::AnyJson(json!({"r": "x"}))),
        }],
        ..Overriders::default()
    };
    let out = render(
        &template,
        &c,
        Some(ReplicaShare::Replicas(2)),
        None,
        &[&bump],
    )
    .unwrap();
    assert_eq!(
        out,
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"r": "x"}}, "spec": {"replicas": 2}})
    );
    // The template is not changed.
    assert_eq!(template["spec"]["replicas"], json!(6));
}

#[test]
fn replica_shares_per_kind() {
    // (template, share, expected spec)
    let cases = [
        (
            json!({"kind": "StatefulSet", "spec": {"replicas": 9}}),
            ReplicaShare::Replicas(3),
            json!({"replicas": 3}),
        ),
        (
            json!({"kind": "ReplicaSet"}),
            ReplicaShare::Replicas(1),
            json!({"replicas": 1}),
        ),
        (
            json!({"kind": "Job", "spec": {"parallelism": 4}}),
            ReplicaShare::Replicas(2),
            json!({"parallelism": 2}),
        ),
        (
            json!({"kind": "Job", "spec": {"parallelism": 4, "completions": 8}}),
            ReplicaShare::Job {
                parallelism: 1,
                completions: Some(2),
            },
            json!({"parallelism": 1, "completions": 2}),
        ),
        (
            json!({"kind": "Job", "spec": {"parallelism": 4}}),
            ReplicaShare::Job {
                parallelism: 2,
                completions: None,
            },
            json!({"parallelism": 2}),
        ),
        (
            json!({"kind": "HorizontalPodAutoscaler", "spec": {"minReplicas": 2, "maxReplicas": 10, "scaleTargetRef": {}}}),
            ReplicaShare::Hpa { min: 1, max: 5 },
            json!({"minReplicas": 1, "maxReplicas": 5, "scaleTargetRef": {}}),
        ),
        (
            json!({"kind": "ConfigMap", "spec": {}}),
            ReplicaShare::Replicas(3),
            json!({}),
        ),
    ];
    let c = cluster("a", &[], None);
    for (template, share, want) in cases {
        let out = render(&template, &c, Some(share), None, &[]).unwrap();
        assert_eq!(out["spec"], want, "{template} {share:?}");
    }
}

#[test]
fn an_interpreted_kind_gets_its_share_where_the_interpreter_says_before_overrides() {
    let spec: flotilla_apis::config::v1alpha1::ResourceInterpreterSpec = serde_json::from_value(
        json!({"target": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"},
               "replicas": {"count": "self.spec.size"},
               "reviseReplicas": {"path": "spec.size"}}),
    )
    .unwrap();
    let interpreter = flotilla_interpreter::Interpreter::compile(&spec).unwrap();
    let template = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web", "namespace": "shop"}, "spec": {"size": 6, "replicas": 6}});
    let c = cluster("a", &[], None);
    let out = render(
        &template,
        &c,
        Some(ReplicaShare::Replicas(2)),
        Some(&interpreter),
        &[],
    )
    .unwrap();
    assert_eq!(out["spec"], json!({"size": 2, "replicas": 6}));
    // A path through something other than an object is an error for that cluster.
    let bad = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web"}, "spec": "oops"});
    let err = render(
        &bad,
        &c,
        Some(ReplicaShare::Replicas(2)),
        Some(&interpreter),
        &[],
    )
    .unwrap_err();
    assert!(err.to_string().contains("spec is not an object"), "{err}");
}

#[test]
fn render_refuses_overrides_of_the_identity() {
    let c = cluster("a", &[], None);
    let template = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "cfg", "namespace": "team"}, "data": {"a": "1"}});
    let moved = Overriders {
        plaintext: vec![flotilla_apis::policy::v1alpha1::PlaintextOverrider {
            path: "/metadata/namespace".into(),
            operator: OverriderOperator::Replace,
            value: Some(flotilla_apis::policy::v1alpha1::AnyJson(json!(
                "kube-system"
            ))),
        }],
        ..Overriders::default()
    };
    let err = render(&template, &c, None, None, &[&set_label("x", "y"), &moved])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("identity"), "{err}");
    // Content may change.
    let out = render(&template, &c, None, None, &[&set_label("x", "y")]).unwrap();
    assert_eq!(out["metadata"]["namespace"], json!("team"));
}
