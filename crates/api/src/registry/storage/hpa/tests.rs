use serde_json::{json, Value};

use super::{from_v1, to_v1};

fn v2(spec: Value, status: Value) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": {"name": "web", "namespace": "ns", "annotations": {"team": "a"}},
           "spec": spec, "status": status})
}

fn target() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
}

#[test]
fn a_cpu_only_hpa_maps_field_for_field() {
    let stored = v2(
        json!({"scaleTargetRef": target(), "minReplicas": 2, "maxReplicas": 5, "metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]}),
        json!({"currentReplicas": 3, "desiredReplicas": 4, "currentMetrics": [
            {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 70, "averageValue": "120m"}}}]}),
    );
    let v1 = to_v1(stored.clone());
    assert_eq!(v1["apiVersion"], "autoscaling/v1");
    assert_eq!(
        v1["spec"],
        json!({"scaleTargetRef": target(), "minReplicas": 2, "maxReplicas": 5, "targetCPUUtilizationPercentage": 60})
    );
    assert_eq!(
        v1["status"],
        json!({"currentReplicas": 3, "desiredReplicas": 4, "currentCPUUtilizationPercentage": 70})
    );
    let annotations = v1["metadata"]["annotations"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert_eq!(annotations["team"], "a");
    assert!(!annotations.contains_key("autoscaling.alpha.kubernetes.io/metrics"));
    // The reading's raw value travels in the current-metrics annotation.
    let current: Value = serde_json::from_str(
        annotations["autoscaling.alpha.kubernetes.io/current-metrics"]
            .as_str()
            .unwrap_or(""),
    )
    .expect("JSON");
    assert_eq!(
        current,
        json!([{"type": "Resource", "resource": {"name": "cpu", "currentAverageUtilization": 70, "currentAverageValue": "120m"}}])
    );
    // Back to storage: what v2 held, annotations dropped.
    assert_eq!(from_v1(v1), stored);
    // Each direction leaves an object already in its shape alone.
    assert_eq!(from_v1(stored.clone()), stored);
    let once = to_v1(stored.clone());
    assert_eq!(to_v1(once.clone()), once);
}

#[test]
fn other_metrics_behavior_and_conditions_round_trip_through_annotations() {
    let metrics = json!([
        {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
        {"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}}, "target": {"type": "Value", "value": "30"}}},
        {"type": "Object", "object": {"describedObject": {"apiVersion": "v1", "kind": "Service", "name": "s"}, "target": {"type": "Value", "value": "2"}, "metric": {"name": "rps"}}},
        {"type": "ContainerResource", "containerResource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "1Gi"}, "container": "app"}},
        {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}
    ]);
    let behavior = json!({"scaleDown": {"stabilizationWindowSeconds": 60, "selectPolicy": "Min",
        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 30}]}});
    let conditions = json!([{"type": "AbleToScale", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "ReadyForNewScale", "message": "ok"}]);
    let stored = v2(
        json!({"scaleTargetRef": target(), "minReplicas": 1, "maxReplicas": 9, "metrics": metrics, "behavior": behavior}),
        json!({"currentReplicas": 1, "desiredReplicas": 1, "conditions": conditions}),
    );
    let v1 = to_v1(stored.clone());
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 50);
    let annotation = |k: &str| -> Value {
        let text = v1["metadata"]["annotations"][k].as_str().unwrap_or("null");
        serde_json::from_str(text).expect("JSON")
    };
    let others = annotation("autoscaling.alpha.kubernetes.io/metrics");
    assert_eq!(
        others[0],
        json!({"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "10"}})
    );
    assert_eq!(
        others[1],
        json!({"type": "External", "external": {"metricName": "queue", "metricSelector": {"matchLabels": {"q": "a"}}, "targetValue": "30"}})
    );
    assert_eq!(
        others.as_array().map(Vec::len),
        Some(4),
        "cpu utilization is the v1 field"
    );
    assert_eq!(
        annotation("autoscaling.alpha.kubernetes.io/behavior"),
        json!({"ScaleUp": null, "ScaleDown": {"StabilizationWindowSeconds": 60, "SelectPolicy": "Min",
               "Policies": [{"Type": "Pods", "Value": 1, "PeriodSeconds": 30}]}})
    );
    assert_eq!(
        annotation("autoscaling.alpha.kubernetes.io/conditions"),
        conditions
    );
    // Written back unchanged by a v1 client, the v2 object is whole again (kube puts the
    // annotation's metrics first, then the CPU target).
    let back = from_v1(v1);
    assert_eq!(back["spec"]["metrics"], metrics);
    assert_eq!(back["spec"]["behavior"], behavior);
    assert_eq!(back["status"]["conditions"], conditions);
    assert_eq!(back["metadata"]["annotations"], json!({"team": "a"}));
}

#[test]
fn a_v1_object_without_a_target_gets_kubes_80_percent() {
    let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"}, "spec": {"scaleTargetRef": target(), "maxReplicas": 3},
        "status": {"currentReplicas": 0, "desiredReplicas": 0}});
    let stored = from_v1(v1);
    assert_eq!(stored["apiVersion"], "autoscaling/v2");
    assert_eq!(
        stored["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert!(stored["metadata"].get("annotations").is_none());
    // A new object (no status stored) reads back with v1's status struct.
    let mut fresh = stored.clone();
    fresh.as_object_mut().map(|o| o.remove("status"));
    assert_eq!(
        to_v1(fresh)["status"],
        json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
}
