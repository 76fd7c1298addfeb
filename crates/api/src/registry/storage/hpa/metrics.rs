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

/// A v2 MetricIdentifier from v1's fields at `name` and `selector`.
fn metric(m: &Value, name: &str, selector: &str) -> Option<Value> {
    Some(object(vec![
        ("name", get(m, name)),
        ("selector", get(m, selector)),
    ]))
}

/// A v2 MetricTarget (of type `kind`) or, without a kind, a MetricValueStatus.
fn reading(
    kind: Option<&str>,
    value: Option<Value>,
    average: Option<Value>,
    util: Option<Value>,
) -> Value {
    object(vec![
        ("type", kind.map(|k| json!(k))),
        ("value", value),
        ("averageValue", average),
        ("averageUtilization", util),
    ])
}

/// The v2 readings v1's MetricSpec holds as values, not pointers (so "0" when unset).
const SPEC_VALUES: &[&str] = &["/object/target/value", "/pods/target/averageValue"];

/// The v2 readings v1's MetricStatus holds as values, not pointers.
const STATUS_VALUES: &[&str] = &[
    "/object/current/value",
    "/pods/current/averageValue",
    "/resource/current/averageValue",
    "/containerResource/current/averageValue",
    "/external/current/value",
];

/// A v2 MetricSpec in v1's format.
pub(super) fn spec_to_v1(m: &Value) -> Value {
    to_v1(m, "target", SPEC_VALUES)
}

/// A v2 MetricStatus in v1's format.
pub(super) fn status_to_v1(m: &Value) -> Value {
    to_v1(m, "current", STATUS_VALUES)
}

/// A v2 metric in v1's format: `r` is the reading, "target" for a MetricSpec or "current" for
/// a MetricStatus, which v1 names its fields after (`targetValue`, `currentAverageValue`, …);
/// the readings at `values` are held as values, the rest as pointers.
fn to_v1(m: &Value, r: &str, values: &[&str]) -> Value {
    let t = m["type"].clone();
    let at = |pointer: String| {
        if values.contains(&pointer.as_str()) {
            quantity(m, &pointer)
        } else {
            get(m, &pointer)
        }
    };
    let value = format!("{r}Value");
    let average = format!("{r}AverageValue");
    let utilization = format!("{r}AverageUtilization");
    let (key, body) = match m["type"].as_str().unwrap_or("") {
        "Object" => (
            "object",
            object(vec![
                ("target", get(m, "/object/describedObject")),
                ("metricName", get(m, "/object/metric/name")),
                (&value, at(format!("/object/{r}/value"))),
                ("selector", get(m, "/object/metric/selector")),
                ("averageValue", at(format!("/object/{r}/averageValue"))),
            ]),
        ),
        "Pods" => (
            "pods",
            object(vec![
                ("metricName", get(m, "/pods/metric/name")),
                (&average, at(format!("/pods/{r}/averageValue"))),
                ("selector", get(m, "/pods/metric/selector")),
            ]),
        ),
        kind @ ("Resource" | "ContainerResource") => {
            let container = kind == "ContainerResource";
            let key = if container {
                "containerResource"
            } else {
                "resource"
            };
            (
                key,
                object(vec![
                    ("name", get(m, &format!("/{key}/name"))),
                    (&utilization, at(format!("/{key}/{r}/averageUtilization"))),
                    (&average, at(format!("/{key}/{r}/averageValue"))),
                    (
                        "container",
                        container
                            .then(|| get(m, "/containerResource/container"))
                            .flatten(),
                    ),
                ]),
            )
        }
        "External" => (
            "external",
            object(vec![
                ("metricName", get(m, "/external/metric/name")),
                ("metricSelector", get(m, "/external/metric/selector")),
                (&value, at(format!("/external/{r}/value"))),
                (&average, at(format!("/external/{r}/averageValue"))),
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
        reading(Some(kind), value, average, util)
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
                        metric(m, "/object/metricName", "/object/selector"),
                    ),
                ]),
            )
        }
        "Pods" => (
            "pods",
            object(vec![
                ("metric", metric(m, "/pods/metricName", "/pods/selector")),
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
                        metric(m, "/external/metricName", "/external/metricSelector"),
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

/// A v1 MetricStatus (from the annotation) as v2 has it.
pub(super) fn status_from_v1(m: &Value) -> Value {
    let t = m["type"].clone();
    let current = |value: Option<Value>, average: Option<Value>, util: Option<Value>| {
        Some(reading(None, value, average, util))
    };
    let (key, body) = match m["type"].as_str().unwrap_or("") {
        "Object" => (
            "object",
            object(vec![
                (
                    "metric",
                    metric(m, "/object/metricName", "/object/selector"),
                ),
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
                ("metric", metric(m, "/pods/metricName", "/pods/selector")),
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
                    metric(m, "/external/metricName", "/external/metricSelector"),
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

#[cfg(test)]
mod tests;
