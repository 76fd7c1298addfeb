//! The `kubectl get` cells of FlowSchemas and PriorityLevelConfigurations that are more than a
//! field (`@apf…` columns), as kube-apiserver's printers fill them: `<none>` where the spec has
//! no value, `?` for a schema whose `Dangling` condition is not set yet.

use serde_json::{json, Value};

/// The cell `name` of `o`, or None when `name` is not one of these.
pub fn cell(name: &str, o: &Value) -> Option<Value> {
    let none = || json!("<none>");
    let limited = o.pointer("/spec/limited").filter(|l| l.is_object());
    let queuing = limited
        .and_then(|l| l.pointer("/limitResponse/queuing"))
        .filter(|q| q.is_object());
    let limited_field =
        |key: &str| limited.map_or_else(none, |l| l.get(key).cloned().unwrap_or(json!(0)));
    let queuing_field =
        |key: &str| queuing.map_or_else(none, |q| q.get(key).cloned().unwrap_or(json!(0)));
    Some(match name {
        "@apfmethod" => o
            .pointer("/spec/distinguisherMethod/type")
            .cloned()
            .unwrap_or_else(none),
        "@apfmissingpl" => {
            let conditions = o.pointer("/status/conditions").and_then(Value::as_array);
            let dangling = conditions
                .into_iter()
                .flatten()
                .find(|c| c["type"] == "Dangling");
            dangling.map_or(json!("?"), |c| c["status"].clone())
        }
        "@apfshares" => limited_field("nominalConcurrencyShares"),
        "@apfqueues" => queuing_field("queues"),
        "@apfhandsize" => queuing_field("handSize"),
        "@apfqueuelimit" => queuing_field("queueLengthLimit"),
        _ => return None,
    })
}
