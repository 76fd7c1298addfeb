//! The `Available` condition of each APIService, as kube-aggregator's two availability
//! controllers set it: a local APIService is always available (reason `Local`); one backed
//! by a Service is checked as the remote controller checks it — the Service exists, listens on
//! the port, has endpoints — and then, where kube would call the server's discovery endpoint,
//! the hub says it does not: flotilla runs no pods and proxies to no aggregated API server, so
//! such an APIService is `Available=False` with reason `FailedDiscoveryCheck` and a message
//! saying why, never silently available.

use serde_json::{json, Value};

use super::{validation::is_local, LOCAL_MESSAGE, LOCAL_REASON};
use crate::meta::now_rfc3339;

/// The condition type kube sets.
const AVAILABLE: &str = "Available";

/// What the `Available` condition should say: status, reason, message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    pub status: &'static str,
    pub reason: &'static str,
    pub message: String,
}

/// The Service and Endpoints an APIService names, as read from the hub's store.
pub(crate) struct Backend {
    /// The Service `spec.service` names, if it exists.
    pub service: Option<Value>,
    /// The Endpoints of the same name, if they exist.
    pub endpoints: Option<Value>,
}

/// `SetAPIServiceCondition`: replace or add the `Available` condition; its
/// `lastTransitionTime` moves only when its status changes.
pub(crate) fn set_condition(obj: &mut Value, status: &str, reason: &str, message: &str) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let status_obj = map.entry("status").or_insert_with(|| json!({}));
    if !status_obj.is_object() {
        *status_obj = json!({});
    }
    let conditions = &mut status_obj["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    match list
        .iter_mut()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(AVAILABLE))
    {
        Some(c) => {
            if c.get("status").and_then(Value::as_str) != Some(status) {
                c["status"] = json!(status);
                c["lastTransitionTime"] = json!(now_rfc3339());
            }
            c["reason"] = json!(reason);
            c["message"] = json!(message);
        }
        None => list.push(json!({
            "type": AVAILABLE,
            "status": status,
            "lastTransitionTime": now_rfc3339(),
            "reason": reason,
            "message": message,
        })),
    }
}

/// The verdict on `apiservice`, given what its Service reference finds (ignored when local).
pub(crate) fn verdict(apiservice: &Value, backend: &Backend) -> Verdict {
    if is_local(apiservice) {
        return Verdict {
            status: "True",
            reason: LOCAL_REASON,
            message: LOCAL_MESSAGE.into(),
        };
    }
    let text = |p: &str| apiservice.pointer(p).and_then(Value::as_str).unwrap_or("");
    let (ns, name) = (text("/spec/service/namespace"), text("/spec/service/name"));
    let port = apiservice
        .pointer("/spec/service/port")
        .and_then(Value::as_i64)
        .unwrap_or(443);
    let unavailable = |reason: &'static str, message: String| Verdict {
        status: "False",
        reason,
        message,
    };
    let Some(service) = &backend.service else {
        return unavailable(
            "ServiceNotFound",
            format!("service/{name} in {ns:?} is not present"),
        );
    };
    let service_type = service
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    if service_type == "ClusterIP" {
        let ports = service
            .pointer("/spec/ports")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let Some(found) = ports
            .iter()
            .find(|p| p.get("port").and_then(Value::as_i64) == Some(port))
        else {
            return unavailable(
                "ServicePortError",
                format!("service/{name} in {ns:?} is not listening on port {port}"),
            );
        };
        let port_name = found.get("name").and_then(Value::as_str).unwrap_or("");
        let Some(endpoints) = &backend.endpoints else {
            return unavailable(
                "EndpointsNotFound",
                format!("cannot find endpoints for service/{name} in {ns:?}"),
            );
        };
        if !has_active_endpoints(endpoints, port_name) {
            return unavailable(
                "MissingEndpoints",
                format!(
                    "endpoints for service/{name} in {ns:?} have no addresses with port name {port_name:?}"
                ),
            );
        }
    }
    // Where kube-aggregator would now GET the server's discovery document through the Service.
    let path = match text("/spec/group") {
        "" => format!("/api/{}", text("/spec/version")),
        group => format!("/apis/{group}/{}", text("/spec/version")),
    };
    unavailable(
        "FailedDiscoveryCheck",
        format!(
            "flotilla does not proxy to aggregated API servers: {path} is not requested from \
             service/{name} in {ns:?} (serve this API from the hub, e.g. with a \
             CustomResourceDefinition)"
        ),
    )
}

/// A subset with addresses that serves the port named `port_name`.
fn has_active_endpoints(endpoints: &Value, port_name: &str) -> bool {
    let subsets = endpoints
        .get("subsets")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    subsets.iter().any(|s| {
        let addresses = s.get("addresses").and_then(Value::as_array);
        let ports = s.get("ports").and_then(Value::as_array);
        addresses.is_some_and(|a| !a.is_empty())
            && ports
                .into_iter()
                .flatten()
                .any(|p| p.get("name").and_then(Value::as_str).unwrap_or("") == port_name)
    })
}

/// `apiservice` with its `Available` condition set to `v`, or None when it already says so.
pub(crate) fn with_verdict(apiservice: &Value, v: &Verdict) -> Option<Value> {
    let mut new = apiservice.clone();
    set_condition(&mut new, v.status, v.reason, &v.message);
    (new.get("status") != apiservice.get("status")).then_some(new)
}
