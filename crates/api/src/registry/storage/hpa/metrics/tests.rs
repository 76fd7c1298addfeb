//! v2 metrics in v1's annotation shape, kind by kind: the field names v1 gives targets and
//! readings, and the readings v1 holds as values ("0" when v2 has none).

use serde_json::{json, Value};

use super::{spec_to_v1, status_from_v1, status_to_v1};

#[test]
fn specs_in_v1s_shape() {
    let cases: [(Value, Value); 6] = [
        (
            json!({"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "rps", "selector": {"matchLabels": {"a": "b"}}}, "target": {"type": "AverageValue", "averageValue": "3"}}}),
            json!({"type": "Object", "object": {"target": {"kind": "Service", "name": "s"}, "metricName": "rps", "targetValue": "0", "selector": {"matchLabels": {"a": "b"}}, "averageValue": "3"}}),
        ),
        (
            json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue"}}}),
            json!({"type": "Pods", "pods": {"metricName": "qps", "targetAverageValue": "0"}}),
        ),
        (
            json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "100m"}}}),
            json!({"type": "Resource", "resource": {"name": "cpu", "targetAverageValue": "100m"}}),
        ),
        (
            json!({"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app", "target": {"type": "Utilization", "averageUtilization": 40}}}),
            json!({"type": "ContainerResource", "containerResource": {"name": "memory", "targetAverageUtilization": 40, "container": "app"}}),
        ),
        (
            json!({"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "5"}}}),
            json!({"type": "External", "external": {"metricName": "queue", "targetAverageValue": "5"}}),
        ),
        (json!({"type": "Other"}), json!({"type": "Other"})),
    ];
    for (v2, v1) in cases {
        assert_eq!(spec_to_v1(&v2), v1, "{v2}");
    }
}

#[test]
fn statuses_in_v1s_shape() {
    let cases: [(Value, Value); 5] = [
        (
            json!({"type": "Object", "object": {"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "rps"}, "current": {"averageValue": "3"}}}),
            json!({"type": "Object", "object": {"target": {"kind": "Service", "name": "s"}, "metricName": "rps", "currentValue": "0", "averageValue": "3"}}),
        ),
        (
            json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "7"}}}),
            json!({"type": "Pods", "pods": {"metricName": "qps", "currentAverageValue": "7"}}),
        ),
        (
            json!({"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 70}}}),
            json!({"type": "Resource", "resource": {"name": "cpu", "currentAverageUtilization": 70, "currentAverageValue": "0"}}),
        ),
        (
            json!({"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app", "current": {}}}),
            json!({"type": "ContainerResource", "containerResource": {"name": "memory", "currentAverageValue": "0", "container": "app"}}),
        ),
        (
            json!({"type": "External", "external": {"metric": {"name": "queue", "selector": {"matchLabels": {"q": "a"}}}, "current": {"averageValue": "4"}}}),
            json!({"type": "External", "external": {"metricName": "queue", "metricSelector": {"matchLabels": {"q": "a"}}, "currentValue": "0", "currentAverageValue": "4"}}),
        ),
    ];
    for (v2, v1) in cases {
        assert_eq!(status_to_v1(&v2), v1, "{v2}");
    }
}

#[test]
fn v1_statuses_in_v2s_shape() {
    let cases: [(Value, Value); 4] = [
        (
            json!({"type": "Object", "object": {"target": {"kind": "Service", "name": "s"}, "metricName": "rps", "selector": {"matchLabels": {"a": "b"}}, "currentValue": "2", "averageValue": "3"}}),
            json!({"type": "Object", "object": {"metric": {"name": "rps", "selector": {"matchLabels": {"a": "b"}}}, "current": {"value": "2", "averageValue": "3"}, "describedObject": {"kind": "Service", "name": "s"}}}),
        ),
        (
            json!({"type": "Pods", "pods": {"metricName": "qps"}}),
            json!({"type": "Pods", "pods": {"metric": {"name": "qps"}, "current": {"averageValue": "0"}}}),
        ),
        (
            json!({"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app", "currentAverageUtilization": 40}}),
            json!({"type": "ContainerResource", "containerResource": {"name": "memory", "current": {"averageValue": "0", "averageUtilization": 40}, "container": "app"}}),
        ),
        (
            json!({"type": "External", "external": {"metricName": "queue", "currentAverageValue": "4"}}),
            json!({"type": "External", "external": {"metric": {"name": "queue"}, "current": {"value": "0", "averageValue": "4"}}}),
        ),
    ];
    for (v1, v2) in cases {
        assert_eq!(status_from_v1(&v1), v2, "{v1}");
    }
}
