//! The four kinds of metric (Object, Pods, Resource, ContainerResource, External) in v2's
//! shape and in v1's annotation shape (kube's autoscaling/v1 MetricSpec and MetricStatus, which
//! name targets and readings as v2beta1 did).

use serde_json::{json, Value};

/// Builds an object of the fields that are set, in the order given.
fn object(fields: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .filter_map(|(k, v)| v.filter(|v| !v.is_null()).map(|v| (k.to_string(), v)))
            .collect(),
    )
}

fn get(v: &Value, pointer: &str) -> Option<Value> {
    v.pointer(pointer).filter(|v| !v.is_null()).cloned()
}

/// A quantity v1 holds as a value, not a pointer: "0" when unset.
fn quantity(v: &Value, pointer: &str) -> Option<Value> {
    Some(get(v, pointer).unwrap_or(json!("0")))
}

/// A v2 MetricSpec in v1's format.
pub(super) fn spec_to_v1(m: &Value) -> Value {
    let t = m["type"].clone();
    let (key, body) = match m["type"].as_str().unwrap_or("") {
        "Object" => (
            "object",
            object(vec![
                ("target", get(m, "/object/describedObject")),
                ("metricName", get(m, "/object/metric/name")),
                ("targetValue", quantity(m, "/object/target/value")),
                ("selector", get(m, "/object/metric/selector")),
                ("averageValue", get(m, "/object/target/averageValue")),
            ]),
        ),
        "Pods" => (
            "pods",
            object(vec![
                ("metricName", get(m, "/pods/metric/name")),
                (
                    "targetAverageValue",
                    quantity(m, "/pods/target/averageValue"),
                ),
                ("selector", get(m, "/pods/metric/selector")),
            ]),
        ),
        "Resource" => (
            "resource",
            object(vec![
                ("name", get(m, "/resource/name")),
                (
                    "targetAverageUtilization",
                    get(m, "/resource/target/averageUtilization"),
                ),
                (
                    "targetAverageValue",
                    get(m, "/resource/target/averageValue"),
                ),
            ]),
        ),
        "ContainerResource" => (
            "containerResource",
            object(vec![
                ("name", get(m, "/containerResource/name")),
                (
                    "targetAverageUtilization",
                    get(m, "/containerResource/target/averageUtilization"),
                ),
                (
                    "targetAverageValue",
                    get(m, "/containerResource/target/averageValue"),
                ),
                ("container", get(m, "/containerResource/container")),
            ]),
        ),
        "External" => (
            "external",
            object(vec![
                ("metricName", get(m, "/external/metric/name")),
                ("metricSelector", get(m, "/external/metric/selector")),
                ("targetValue", get(m, "/external/target/value")),
                (
                    "targetAverageValue",
                    get(m, "/external/target/averageValue"),
                ),
            ]),
        ),
        _ => return json!({"type": t}),
    };
    json!({"type": t, key: body})
}

/// A v1 MetricSpec (from the annotation) as v2 has it.
pub(super) fn spec_from_v1(m: &Value) -> Value {
    let t = m["type"].clone();
    let target = |kind: &str, value: Option<Value>, average: Option<Value>, util: Option<Value>| {
        object(vec![
            ("type", Some(json!(kind))),
            ("value", value),
            ("averageValue", average),
            ("averageUtilization", util),
        ])
    };
    let resource_target = |p: &str| {
        let util = get(m, &format!("{p}/targetAverageUtilization"));
        let kind = if util.is_some() {
            "Utilization"
        } else {
            "AverageValue"
        };
        target(kind, None, get(m, &format!("{p}/targetAverageValue")), util)
    };
    let (key, body) = match m["type"].as_str().unwrap_or("") {
        "Object" => {
            let average = get(m, "/object/averageValue");
            let kind = if average.is_some() {
                "AverageValue"
            } else {
                "Value"
            };
            (
                "object",
                object(vec![
                    ("describedObject", get(m, "/object/target")),
                    (
                        "target",
                        Some(target(
                            kind,
                            quantity(m, "/object/targetValue"),
                            average,
                            None,
                        )),
                    ),
                    (
                        "metric",
                        Some(object(vec![
                            ("name", get(m, "/object/metricName")),
                            ("selector", get(m, "/object/selector")),
                        ])),
                    ),
                ]),
            )
        }
        "Pods" => (
            "pods",
            object(vec![
                (
                    "metric",
                    Some(object(vec![
                        ("name", get(m, "/pods/metricName")),
                        ("selector", get(m, "/pods/selector")),
                    ])),
                ),
                (
                    "target",
                    Some(target(
                        "AverageValue",
                        None,
                        quantity(m, "/pods/targetAverageValue"),
                        None,
                    )),
                ),
            ]),
        ),
        "Resource" => (
            "resource",
            object(vec![
                ("name", get(m, "/resource/name")),
                ("target", Some(resource_target("/resource"))),
            ]),
        ),
        "ContainerResource" => (
            "containerResource",
            object(vec![
                ("name", get(m, "/containerResource/name")),
                ("target", Some(resource_target("/containerResource"))),
                ("container", get(m, "/containerResource/container")),
            ]),
        ),
        "External" => {
            let value = get(m, "/external/targetValue");
            let kind = if value.is_some() {
                "Value"
            } else {
                "AverageValue"
            };
            (
                "external",
                object(vec![
                    (
                        "metric",
                        Some(object(vec![
                            ("name", get(m, "/external/metricName")),
                            ("selector", get(m, "/external/metricSelector")),
                        ])),
                    ),
                    (
                        "target",
                        Some(target(
                            kind,
                            value,
                            get(m, "/external/targetAverageValue"),
                            None,
                        )),
                    ),
                ]),
            )
        }
        _ => return json!({"type": t}),
    };
    json!({"type": t, key: body})
}

/// A v2 MetricStatus in v1's format.
pub(super) fn status_to_v1(m: &Value) -> Value {
    let t = m["type"].clone();
    let (key, body) = match m["type"].as_str().unwrap_or("") {
        "Object" => (
            "object",
            object(vec![
                ("target", get(m, "/object/describedObject")),
                ("metricName", get(m, "/object/metric/name")),
                ("currentValue", quantity(m, "/object/current/value")),
                ("selector", get(m, "/object/metric/selector")),
                ("averageValue", get(m, "/object/current/averageValue")),
            ]),
        ),
        "Pods" => (
            "pods",
            object(vec![
                ("metricName", get(m, "/pods/metric/name")),
                (
                    "currentAverageValue",
                    quantity(m, "/pods/current/averageValue"),
                ),
                ("selector", get(m, "/pods/metric/selector")),
            ]),
        ),
        "Resource" => (
            "resource",
            object(vec![
                ("name", get(m, "/resource/name")),
                (
                    "currentAverageUtilization",
                    get(m, "/resource/current/averageUtilization"),
                ),
                (
                    "currentAverageValue",
                    quantity(m, "/resource/current/averageValue"),
                ),
            ]),
        ),
        "ContainerResource" => (
            "containerResource",
            object(vec![
                ("name", get(m, "/containerResource/name")),
                (
                    "currentAverageUtilization",
                    get(m, "/containerResource/current/averageUtilization"),
                ),
                (
                    "currentAverageValue",
                    quantity(m, "/containerResource/current/averageValue"),
                ),
                ("container", get(m, "/containerResource/container")),
            ]),
        ),
        "External" => (
            "external",
            object(vec![
                ("metricName", get(m, "/external/metric/name")),
                ("metricSelector", get(m, "/external/metric/selector")),
                ("currentValue", quantity(m, "/external/current/value")),
                (
                    "currentAverageValue",
                    get(m, "/external/current/averageValue"),
                ),
            ]),
        ),
        _ => return json!({"type": t}),
    };
    json!({"type": t, key: body})
}

/// A v1 MetricStatus (from the annotation) as v2 has it.
pub(super) fn status_from_v1(m: &Value) -> Value {
    let t = m["type"].clone();
    let current = |value: Option<Value>, average: Option<Value>, util: Option<Value>| {
        Some(object(vec![
            ("value", value),
            ("averageValue", average),
            ("averageUtilization", util),
        ]))
    };
    let metric = |name: &str, selector: &str| {
        Some(object(vec![
            ("name", get(m, name)),
            ("selector", get(m, selector)),
        ]))
    };
    let (key, body) = match m["type"].as_str().unwrap_or("") {
        "Object" => (
            "object",
            object(vec![
                ("metric", metric("/object/metricName", "/object/selector")),
                (
                    "current",
                    current(
                        quantity(m, "/object/currentValue"),
                        get(m, "/object/averageValue"),
                        None,
                    ),
                ),
                ("describedObject", get(m, "/object/target")),
            ]),
        ),
        "Pods" => (
            "pods",
            object(vec![
                ("metric", metric("/pods/metricName", "/pods/selector")),
                (
                    "current",
                    current(None, quantity(m, "/pods/currentAverageValue"), None),
                ),
            ]),
        ),
        "Resource" => (
            "resource",
            object(vec![
                ("name", get(m, "/resource/name")),
                (
                    "current",
                    current(
                        None,
                        quantity(m, "/resource/currentAverageValue"),
                        get(m, "/resource/currentAverageUtilization"),
                    ),
                ),
            ]),
        ),
        "ContainerResource" => (
            "containerResource",
            object(vec![
                ("name", get(m, "/containerResource/name")),
                (
                    "current",
                    current(
                        None,
                        quantity(m, "/containerResource/currentAverageValue"),
                        get(m, "/containerResource/currentAverageUtilization"),
                    ),
                ),
                ("container", get(m, "/containerResource/container")),
            ]),
        ),
        "External" => (
            "external",
            object(vec![
                (
                    "metric",
                    metric("/external/metricName", "/external/metricSelector"),
                ),
                (
                    "current",
                    current(
                        quantity(m, "/external/currentValue"),
                        get(m, "/external/currentAverageValue"),
                        None,
                    ),
                ),
            ]),
        ),
        _ => return json!({"type": t}),
    };
    json!({"type": t, key: body})
}
