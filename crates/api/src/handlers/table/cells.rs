//! Computed cells (`@name` columns) of the built-in kinds added for issue 21 — pods, nodes,
//! quotas, endpoint slices, storage and certificate kinds — worked out as kube-apiserver's
//! printers (`pkg/printers/internalversion`) work them out, so `kubectl get` prints the same.

use serde_json::{json, Value};

use super::{join, scalar, selector};
use crate::registry::ResourceInfo;

/// The Name cell: the object's name, and for the default StorageClass ` (default)` after it,
/// as kubectl shows it.
pub(super) fn name(res: &ResourceInfo, o: &Value) -> Value {
    let Some(name) = o.pointer("/metadata/name").and_then(Value::as_str) else {
        return o.pointer("/metadata/name").cloned().unwrap_or(Value::Null);
    };
    let default_class = !res.custom
        && res.group == "storage.k8s.io"
        && res.plural == "storageclasses"
        && [
            "storageclass.kubernetes.io/is-default-class",
            "storageclass.beta.kubernetes.io/is-default-class",
        ]
        .iter()
        .any(|a| {
            o.pointer("/metadata/annotations")
                .and_then(|m| m.get(*a))
                .and_then(Value::as_str)
                == Some("true")
        });
    if default_class {
        json!(format!("{name} (default)"))
    } else {
        json!(name)
    }
}

/// The cell `name` of `o`, or None when `name` is not one of these kinds' cells.
pub(super) fn computed(name: &str, o: &Value) -> Option<Value> {
    let text = |p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or("");
    let or = |v: &str, none: &str| {
        if v.is_empty() {
            none.to_string()
        } else {
            v.to_string()
        }
    };
    let int = |p: &str| o.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    let flag = |p: &str, default: bool| o.pointer(p).and_then(Value::as_bool).unwrap_or(default);
    Some(match name {
        "@podready" => json!(pod_ready(o)),
        "@podstatus" => json!(pod_status(o)),
        "@podrestarts" => json!(pod_restarts(o).to_string()),
        "@podip" => json!(or(text("/status/podIPs/0/ip"), "<none>")),
        "@podnode" => json!(or(text("/spec/nodeName"), "<none>")),
        "@podnominated" => json!(or(text("/status/nominatedNodeName"), "<none>")),
        "@podgates" => json!(readiness_gates(o)),
        // Go prints an unset int32 status count as 0.
        "@statusreplicas" => json!(int("/status/replicas")),
        "@readyreplicas" => json!(int("/status/readyReplicas")),
        "@tplcontainers" => json!(template_containers(o, "name")),
        "@tplimages" => json!(template_containers(o, "image")),
        "@tpllabels" => json!(selector(o.pointer("/template/metadata/labels"))),
        "@nodestatus" => json!(node_status(o)),
        "@noderoles" => json!(node_roles(o)),
        "@nodeinternalip" => json!(node_address(o, "InternalIP")),
        "@nodeexternalip" => json!(node_address(o, "ExternalIP")),
        "@nodeosimage" => json!(or(text("/status/nodeInfo/osImage"), "<unknown>")),
        "@nodekernel" => json!(or(text("/status/nodeInfo/kernelVersion"), "<unknown>")),
        "@noderuntime" => json!(or(
            text("/status/nodeInfo/containerRuntimeVersion"),
            "<unknown>"
        )),
        "@pvaccessmodes" => json!(access_modes(o.pointer("/spec/accessModes"))),
        "@pvclaim" => match o.pointer("/spec/claimRef") {
            Some(r) if r.is_object() => json!(format!(
                "{}/{}",
                scalar(&r["namespace"]),
                scalar(&r["name"])
            )),
            _ => json!(""),
        },
        "@pvattrclass" => json!(or(text("/spec/volumeAttributesClassName"), "<unset>")),
        "@quotarequest" => json!(quota(o, false)),
        "@quotalimit" => json!(quota(o, true)),
        "@sliceports" => json!(slice_ports(o)),
        "@sliceendpoints" => json!(slice_endpoints(o)),
        "@revisioncontroller" => json!(revision_controller(o)),
        "@ingressclassparams" => json!(ingress_class_parameters(o)),
        "@globaldefault" => json!(flag("/globalDefault", false)),
        "@reclaimpolicy" => json!(or(text("/reclaimPolicy"), "Delete")),
        "@bindingmode" => json!(or(text("/volumeBindingMode"), "Immediate")),
        "@allowexpansion" => json!(flag("/allowVolumeExpansion", false)),
        "@csitokenrequests" => json!(match o.pointer("/spec/tokenRequests") {
            Some(Value::Array(a)) => a
                .iter()
                .map(|t| scalar(&t["audience"]))
                .collect::<Vec<_>>()
                .join(","),
            _ => "<unset>".to_string(),
        }),
        "@csimodes" => json!(join(
            o.pointer("/spec/volumeLifecycleModes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(scalar)
        )),
        "@csinodedrivers" => json!(o
            .pointer("/spec/drivers")
            .and_then(Value::as_array)
            .map_or(0, Vec::len)),
        "@csrduration" => match o.pointer("/spec/expirationSeconds").and_then(Value::as_i64) {
            Some(s) => json!(human_duration(s)),
            None => json!("<none>"),
        },
        "@csrcondition" => json!(csr_condition(o)),
        "@webhooks" => json!(array(o, "/webhooks").len()),
        "@vapvalidations" => json!(array(o, "/spec/validations").len()),
        "@vapparamkind" => match o.pointer("/spec/paramKind") {
            Some(k) if k.is_object() => json!(format!(
                "{}/{}",
                k["apiVersion"].as_str().unwrap_or(""),
                k["kind"].as_str().unwrap_or("")
            )),
            _ => json!("<unset>"),
        },
        "@vapbparamref" => json!(crate::admission::policy::kinds::param_ref_cell(o)),
        apf if apf.starts_with("@apf") => return crate::flowcontrol::printer::cell(apf, o),
        _ => return None,
    })
}

fn array<'a>(o: &'a Value, p: &str) -> &'a [Value] {
    o.pointer(p)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `ready/total` containers (restartable init containers count as containers).
fn pod_ready(o: &Value) -> String {
    let sidecars = array(o, "/spec/initContainers")
        .iter()
        .filter(|c| c["restartPolicy"] == "Always")
        .count();
    let total = array(o, "/spec/containers").len() + sidecars;
    let ready = array(o, "/status/containerStatuses")
        .iter()
        .filter(|c| c["ready"] == true && c.pointer("/state/running").is_some())
        .count();
    format!("{ready}/{total}")
}

/// The pod's phase, or the reason a container gives, or Terminating, as `kubectl get pods`.
fn pod_status(o: &Value) -> String {
    let mut reason = scalar(o.pointer("/status/phase").unwrap_or(&Value::Null));
    if let Some(r) = o.pointer("/status/reason").and_then(Value::as_str) {
        if !r.is_empty() {
            reason = r.to_string();
        }
    }
    for c in array(o, "/status/conditions") {
        if c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated" {
            reason = "SchedulingGated".into();
        }
    }
    for c in array(o, "/status/containerStatuses").iter().rev() {
        let waiting = c.pointer("/state/waiting/reason").and_then(Value::as_str);
        let terminated = c.pointer("/state/terminated");
        if let Some(w) = waiting.filter(|w| !w.is_empty()) {
            reason = w.to_string();
        } else if let Some(t) = terminated {
            reason = match t["reason"].as_str().filter(|r| !r.is_empty()) {
                Some(r) => r.to_string(),
                None if t["signal"].as_i64().unwrap_or(0) != 0 => {
                    format!("Signal:{}", t["signal"])
                }
                None => format!("ExitCode:{}", t["exitCode"].as_i64().unwrap_or(0)),
            };
        }
    }
    let terminal = matches!(reason.as_str(), "Succeeded" | "Failed");
    if o.pointer("/metadata/deletionTimestamp").is_some() && !terminal {
        reason = "Terminating".into();
    }
    reason
}

fn pod_restarts(o: &Value) -> i64 {
    array(o, "/status/containerStatuses")
        .iter()
        .filter_map(|c| c["restartCount"].as_i64())
        .sum()
}

fn readiness_gates(o: &Value) -> String {
    let gates = array(o, "/spec/readinessGates");
    if gates.is_empty() {
        return "<none>".into();
    }
    let conditions = array(o, "/status/conditions");
    let passed = gates
        .iter()
        .filter(|g| {
            conditions
                .iter()
                .find(|c| c["type"] == g["conditionType"])
                .is_some_and(|c| c["status"] == "True")
        })
        .count();
    format!("{passed}/{}", gates.len())
}

fn template_containers(o: &Value, field: &str) -> String {
    array(o, "/template/spec/containers")
        .iter()
        .map(|c| scalar(&c[field]))
        .collect::<Vec<_>>()
        .join(",")
}

fn node_status(o: &Value) -> String {
    let mut status: Vec<String> = array(o, "/status/conditions")
        .iter()
        .filter(|c| c["type"] == "Ready")
        .take(1)
        .map(|c| {
            if c["status"] == "True" {
                "Ready".to_string()
            } else {
                "NotReady".to_string()
            }
        })
        .collect();
    if status.is_empty() {
        status.push("Unknown".into());
    }
    if o.pointer("/spec/unschedulable") == Some(&Value::Bool(true)) {
        status.push("SchedulingDisabled".into());
    }
    status.join(",")
}

fn node_roles(o: &Value) -> String {
    let mut roles: Vec<String> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
            Some(role) if !role.is_empty() => Some(role.to_string()),
            Some(_) => None,
            None if k == "kubernetes.io/role" => {
                v.as_str().filter(|v| !v.is_empty()).map(String::from)
            }
            None => None,
        })
        .collect();
    roles.sort();
    roles.dedup();
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.join(",")
    }
}

fn node_address(o: &Value, kind: &str) -> String {
    array(o, "/status/addresses")
        .iter()
        .find(|a| a["type"] == kind)
        .map_or_else(|| "<none>".into(), |a| scalar(&a["address"]))
}

/// `RWO,ROX,RWX,RWOP` in kube's fixed order.
fn access_modes(modes: Option<&Value>) -> String {
    let modes: Vec<&str> = modes
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| modes.contains(m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// `resource: used/hard` for each hard limit, `limits.*` in the Limit column, the rest in
/// Request.
fn quota(o: &Value, limits: bool) -> String {
    let Some(hard) = o.pointer("/status/hard").and_then(Value::as_object) else {
        return String::new();
    };
    let mut names: Vec<&String> = hard
        .keys()
        .filter(|k| k.starts_with("limits.") == limits)
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| {
            let used = o
                .pointer("/status/used")
                .and_then(|u| u.get(n.as_str()))
                .map_or_else(|| "0".to_string(), scalar);
            format!("{n}: {used}/{}", scalar(&hard[n.as_str()]))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// At most three items then `+ N more...`; `<unset>` when there are none.
fn list_with_more(items: Vec<String>) -> String {
    const MAX: usize = 3;
    match items.len() {
        0 => "<unset>".into(),
        n if n > MAX => format!("{} + {} more...", items[..MAX].join(","), n - MAX),
        _ => items.join(","),
    }
}

fn slice_ports(o: &Value) -> String {
    list_with_more(
        array(o, "/ports")
            .iter()
            .map(|p| match (&p["port"], &p["name"]) {
                (Value::Number(n), _) => n.to_string(),
                (_, Value::String(n)) => n.clone(),
                _ => "*".into(),
            })
            .collect(),
    )
}

fn slice_endpoints(o: &Value) -> String {
    list_with_more(
        array(o, "/endpoints")
            .iter()
            .flat_map(|e| e["addresses"].as_array().cloned().unwrap_or_default())
            .map(|a| scalar(&a))
            .collect(),
    )
}

/// `kind.group/name` of the controlling owner, lower-cased kind, or `<none>`.
fn revision_controller(o: &Value) -> String {
    let Some(owner) = array(o, "/metadata/ownerReferences")
        .iter()
        .find(|r| r["controller"] == true)
    else {
        return "<none>".into();
    };
    let group = owner["apiVersion"]
        .as_str()
        .and_then(|av| av.rsplit_once('/'))
        .map_or("", |(g, _)| g);
    let kind = scalar(&owner["kind"]).to_lowercase();
    let gk = if group.is_empty() {
        kind
    } else {
        format!("{kind}.{group}")
    };
    format!("{gk}/{}", scalar(&owner["name"]))
}

fn ingress_class_parameters(o: &Value) -> String {
    let Some(p) = o.pointer("/spec/parameters").filter(|p| p.is_object()) else {
        return "<none>".into();
    };
    let mut out = scalar(&p["kind"]);
    if let Some(g) = p["apiGroup"].as_str() {
        out = format!("{out}.{g}");
    }
    format!("{out}/{}", scalar(&p["name"]))
}

/// `Denied`/`Approved`/`Pending`, then `,Failed` and `,Issued`.
fn csr_condition(o: &Value) -> String {
    let has = |t: &str| {
        array(o, "/status/conditions")
            .iter()
            .any(|c| c["type"] == t)
    };
    let mut out = if has("Denied") {
        "Denied".to_string()
    } else if has("Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has("Failed") {
        out.push_str(",Failed");
    }
    if o.pointer("/status/certificate")
        .and_then(Value::as_str)
        .is_some_and(|c| !c.is_empty())
    {
        out.push_str(",Issued");
    }
    out
}

/// apimachinery's `duration.HumanDuration` for whole seconds.
fn human_duration(secs: i64) -> String {
    let (m, h, d) = (secs / 60, secs / 3600, secs / 86400);
    match secs {
        s if s < 0 => "<invalid>".into(),
        s if s < 120 => format!("{s}s"),
        _ if m < 10 => match secs % 60 {
            0 => format!("{m}m"),
            s => format!("{m}m{s}s"),
        },
        _ if m < 180 => format!("{m}m"),
        _ if h < 8 => match m % 60 {
            0 => format!("{h}h"),
            mm => format!("{h}h{mm}m"),
        },
        _ if h < 48 => format!("{h}h"),
        _ if h < 192 => match h % 24 {
            0 => format!("{d}d"),
            hh => format!("{d}d{hh}h"),
        },
        _ if d < 365 * 2 => format!("{d}d"),
        _ if d < 365 * 8 => match d % 365 {
            0 => format!("{}y", d / 365),
            dd => format!("{}y{dd}d", d / 365),
        },
        _ => format!("{}y", d / 365),
    }
}

#[cfg(test)]
mod tests;
