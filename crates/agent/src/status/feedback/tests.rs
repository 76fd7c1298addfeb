//! Feedback values from realistic objects, by default and by rule.

use flotilla_apis::work::v1alpha1::{
    FeedbackRule, FeedbackValue, FieldValue, JsonPathRule, ResourceIdentifier, ResourceRef,
};
use serde_json::{json, Value};

use super::{evaluate, feedback, field_value, rules_for};

fn int(i: i64) -> FieldValue {
    FieldValue {
        integer: Some(i),
        ..FieldValue::default()
    }
}

fn string(s: &str) -> FieldValue {
    FieldValue {
        string: Some(s.to_owned()),
        ..FieldValue::default()
    }
}

fn boolean(b: bool) -> FieldValue {
    FieldValue {
        boolean: Some(b),
        ..FieldValue::default()
    }
}

fn raw(s: &str) -> FieldValue {
    FieldValue {
        json_raw: Some(s.to_owned()),
        ..FieldValue::default()
    }
}

fn rule(name: &str, path: &str) -> JsonPathRule {
    JsonPathRule {
        name: name.to_owned(),
        path: path.to_owned(),
    }
}

fn named(values: Vec<FeedbackValue>) -> Vec<(String, FieldValue)> {
    values.into_iter().map(|v| (v.name, v.value)).collect()
}

fn pairs(expected: &[(&str, FieldValue)]) -> Vec<(String, FieldValue)> {
    expected
        .iter()
        .map(|(n, v)| ((*n).to_owned(), v.clone()))
        .collect()
}

fn rolling_deployment() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "demo", "generation": 4},
        "spec": {"replicas": 3},
        "status": {
            "observedGeneration": 4, "replicas": 4, "updatedReplicas": 1, "readyReplicas": 3,
            "availableReplicas": 3, "unavailableReplicas": 1,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"},
            ],
        },
    })
}

/// (what, object, values fed back by default)
type DefaultCase = (&'static str, Value, Vec<(&'static str, FieldValue)>);

#[test]
fn well_known_kinds_without_rules() {
    let cases: Vec<DefaultCase> = vec![
        (
            "deployment mid-rollout, conditions left out",
            rolling_deployment(),
            vec![
                ("replicas", int(4)),
                ("updatedReplicas", int(1)),
                ("readyReplicas", int(3)),
                ("availableReplicas", int(3)),
                ("unavailableReplicas", int(1)),
                ("observedGeneration", int(4)),
            ],
        ),
        (
            "new statefulset: absent counters omitted",
            json!({
                "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                "status": {"observedGeneration": 1, "replicas": 3, "currentReplicas": 3},
            }),
            vec![
                ("replicas", int(3)),
                ("currentReplicas", int(3)),
                ("observedGeneration", int(1)),
            ],
        ),
        (
            "daemonset",
            json!({
                "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                "status": {"currentNumberScheduled": 2, "desiredNumberScheduled": 2, "numberAvailable": 2,
                           "numberReady": 2, "updatedNumberScheduled": 2, "numberMisscheduled": 0, "observedGeneration": 3},
            }),
            vec![
                ("currentNumberScheduled", int(2)),
                ("desiredNumberScheduled", int(2)),
                ("numberAvailable", int(2)),
                ("numberReady", int(2)),
                ("updatedNumberScheduled", int(2)),
                ("numberMisscheduled", int(0)),
                ("observedGeneration", int(3)),
            ],
        ),
        (
            "failed job: times as strings",
            json!({
                "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate"},
                "status": {"failed": 7, "startTime": "2025-01-02T03:04:05Z",
                           "conditions": [{"type": "Failed", "status": "True"}]},
            }),
            vec![
                ("failed", int(7)),
                ("startTime", string("2025-01-02T03:04:05Z")),
            ],
        ),
        (
            "LB service with ingress",
            json!({
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.12", "clusterIPs": ["10.96.0.12", "fd00::12"]},
                "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7", "ipMode": "VIP"}]}},
            }),
            vec![
                ("clusterIP", string("10.96.0.12")),
                ("clusterIPs", raw(r#"["10.96.0.12","fd00::12"]"#)),
                (
                    "loadBalancerIngress",
                    raw(r#"[{"ip":"203.0.113.7","ipMode":"VIP"}]"#),
                ),
            ],
        ),
        (
            "LB service without ingress",
            json!({
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                "spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.12"}, "status": {"loadBalancer": {}},
            }),
            vec![("clusterIP", string("10.96.0.12"))],
        ),
        (
            "hpa",
            json!({
                "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "web"},
                "status": {"currentReplicas": 3, "desiredReplicas": 5, "currentMetrics": []},
            }),
            vec![("currentReplicas", int(3)), ("desiredReplicas", int(5))],
        ),
        (
            "configmap: nothing by default",
            json!({
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"replicas": "3"},
            }),
            vec![],
        ),
    ];
    for (what, object, expected) in cases {
        assert_eq!(named(feedback(&object, &[])), pairs(&expected), "{what}");
    }
}

#[test]
fn rules_add_and_replace() {
    let object = rolling_deployment();
    let rules = [
        rule(
            "ready",
            r#"{.status.conditions[?(@.type=="Available")].status}"#,
        ),
        rule("readyReplicas", ".spec.replicas"),
        rule("missing", ".status.collisionCount"),
        rule("broken", ".status.conditions[0"),
        rule("types", ".status.conditions[*].type"),
    ];
    let got = named(feedback(&object, &rules));
    assert_eq!(
        got,
        pairs(&[
            ("replicas", int(4)),
            ("updatedReplicas", int(1)),
            ("availableReplicas", int(3)),
            ("unavailableReplicas", int(1)),
            ("observedGeneration", int(4)),
            ("ready", string("True")),
            ("readyReplicas", int(3)),
            ("types", raw(r#"["Available","Progressing"]"#)),
        ])
    );
}

#[test]
fn evaluating_paths() {
    let object = json!({
        "metadata": {"labels": {"app.kubernetes.io/name": "web"}},
        "spec": {"paused": false, "template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:1.27"}, {"name": "sidecar", "image": "envoy:1.31"}]}}},
        "status": {"ratio": 0.5, "selector": {"app": "web"}, "nothing": null},
    });
    let cases = [
        (
            r".metadata.labels.app\.kubernetes\.io/name",
            Some(string("web")),
        ),
        (".spec.paused", Some(boolean(false))),
        (".status.ratio", Some(raw("0.5"))),
        (".status.selector", Some(raw(r#"{"app":"web"}"#))),
        (".status.nothing", Some(raw("null"))),
        (
            ".spec.template.spec.containers[0].image",
            Some(string("nginx:1.27")),
        ),
        (
            ".spec.template.spec.containers[*].image",
            Some(raw(r#"["nginx:1.27","envoy:1.31"]"#)),
        ),
        (
            r#".spec.template.spec.containers[?(@.name=="sidecar")].image"#,
            Some(string("envoy:1.31")),
        ),
        (
            r#".spec.template.spec.containers[?(@.name=="none")].image"#,
            None,
        ),
        (".status.absent", None),
        ("..image", Some(raw(r#"["nginx:1.27","envoy:1.31"]"#))),
    ];
    for (path, expected) in cases {
        assert_eq!(evaluate(&object, path), expected, "{path}");
    }
    assert_eq!(field_value(&json!(u64::MAX)), raw("18446744073709551615"));
}

#[test]
fn rules_match_manifests_exactly() {
    let rule_for =
        |group: &str, resource: &str, namespace: Option<&str>, name: &str, path: &str| {
            FeedbackRule {
                resource: ResourceRef {
                    group: group.to_owned(),
                    resource: resource.to_owned(),
                    namespace: namespace.map(str::to_owned),
                    name: name.to_owned(),
                },
                json_paths: vec![rule(path, path)],
            }
        };
    let rules = [
        rule_for("apps", "deployments", Some("demo"), "web", "a"),
        rule_for("apps", "deployments", Some("other"), "web", "b"),
        rule_for("", "services", Some("demo"), "web", "c"),
        rule_for("apps", "deployments", Some("demo"), "web", "d"),
        rule_for(
            "apiextensions.k8s.io",
            "customresourcedefinitions",
            None,
            "widgets.example.com",
            "e",
        ),
        rule_for("apps", "deployments", Some("demo"), "api", "f"),
    ];
    let id = |group: &str, kind: &str, resource: &str, namespace: Option<&str>, name: &str| {
        ResourceIdentifier {
            ordinal: 0,
            group: group.to_owned(),
            version: "v1".to_owned(),
            kind: kind.to_owned(),
            resource: resource.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: name.to_owned(),
        }
    };
    let cases = [
        (
            id("apps", "Deployment", "deployments", Some("demo"), "web"),
            vec!["a", "d"],
        ),
        (
            id("", "Service", "services", Some("demo"), "web"),
            vec!["c"],
        ),
        (
            id(
                "apiextensions.k8s.io",
                "CustomResourceDefinition",
                "customresourcedefinitions",
                None,
                "widgets.example.com",
            ),
            vec!["e"],
        ),
        (id("apps", "Deployment", "", Some("demo"), "web"), vec![]),
        (
            id("apps", "StatefulSet", "statefulsets", Some("demo"), "web"),
            vec![],
        ),
    ];
    for (identifier, expected) in cases {
        let got: Vec<&str> = rules_for(&rules, &identifier)
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        assert_eq!(got, expected, "{identifier:?}");
    }
}
