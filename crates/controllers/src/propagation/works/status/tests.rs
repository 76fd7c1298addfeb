use serde_json::{json, Value};

use super::super::aggregate::{aggregate, Member};
use super::status_view;

const NOW: &str = "2026-03-01T12:00:00Z";

fn pod_template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}},
           "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}})
}

/// Summing over the view reads the same as summing over the whole template.
fn same_sums(template: &Value, statuses: &[Value]) {
    let members: Vec<Member<'_>> = statuses
        .iter()
        .enumerate()
        .map(|(i, s)| Member {
            cluster: ["m-1", "m-2", "m-3"][i],
            status: Some(s),
            up_to_date: true,
        })
        .collect();
    let view = status_view(template);
    assert!(view["spec"].get("template").is_none(), "{view}");
    assert_eq!(
        aggregate(&view, &members, NOW, Some("fleet.example")),
        aggregate(template, &members, NOW, Some("fleet.example")),
        "{}",
        template["kind"]
    );
}

#[test]
fn the_status_view_sums_as_the_whole_template() {
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1", "generation": 4,
                     "labels": {"app": "web"}, "annotations": {"a": "b"}},
        "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}},
                 "template": pod_template()},
        "status": {"observedGeneration": 3, "replicas": 4},
    });
    same_sums(
        &deployment,
        &[
            json!({"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
                   "availableReplicas": 3, "observedGeneration": 4}),
            json!({"replicas": 2, "updatedReplicas": 2, "readyReplicas": 1,
                   "availableReplicas": 1, "observedGeneration": 4}),
        ],
    );
    let job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "etl", "namespace": "shop", "uid": "u2", "generation": 1},
        "spec": {"completions": 4, "parallelism": 2, "template": pod_template()},
        "status": {"conditions": [{"type": "Complete", "status": "False",
                                   "lastTransitionTime": "2026-03-01T11:00:00Z"}]},
    });
    same_sums(
        &job,
        &[
            json!({"succeeded": 2, "active": 0}),
            json!({"succeeded": 1, "active": 1}),
        ],
    );
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u3"},
        "spec": {"type": "LoadBalancer", "ports": [{"port": 80}], "selector": {"app": "web"}},
    });
    same_sums(
        &service,
        &[json!({"loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]}})],
    );
}

#[test]
fn an_interpreters_status_rules_combine_the_members_copies_into_the_templates_status() {
    use flotilla_apis::config::v1alpha1::ResourceInterpreterSpec;
    use std::collections::HashMap;

    let spec: ResourceInterpreterSpec = serde_json::from_value(json!({
        "target": {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet"},
        "status": {"fields": [
            {"name": "readyReplicas", "aggregate": "Sum"},
            {"name": "observedGeneration", "aggregate": "Min"},
        ]},
    }))
    .expect("spec");
    let interpreter = flotilla_interpreter::Interpreter::compile(&spec).expect("compiles");
    let template = json!({"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
        "metadata": {"name": "web"}, "status": {"kept": "by the hub"}});
    let copy = |ready: i64, generation: i64| json!({"status": {"readyReplicas": ready, "observedGeneration": generation}});
    let targets = ["m-1", "m-2", "m-3"].map(str::to_owned);
    let mut objects: HashMap<&str, Value> = HashMap::new();
    assert_eq!(
        super::interpreted_status(&interpreter, &template, &targets, &objects),
        None,
        "no member reported yet: nothing to write"
    );
    objects.insert("m-1", copy(2, 3));
    objects.insert("m-2", copy(3, 2));
    // Not a target (any more): not counted.
    objects.insert("m-9", copy(100, 1));
    assert_eq!(
        super::interpreted_status(&interpreter, &template, &targets, &objects),
        Some(json!({"kept": "by the hub", "readyReplicas": 5, "observedGeneration": 2}))
    );
}
