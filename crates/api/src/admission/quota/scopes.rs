//! A quota's scopes (`spec.scopes`, `spec.scopeSelector`): which objects it tracks. Scopes are
//! about pods only, as in kube: a quota with any scope tracks no other kind.

use serde_json::Value;

/// One scope requirement: `Terminating`, or `PriorityClass In [high]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Scope {
    pub name: String,
    pub operator: String,
    pub values: Vec<String>,
}

/// Every scope of a quota: `spec.scopes` (as `Exists`) and `spec.scopeSelector.matchExpressions`.
pub(crate) fn of_quota(quota: &Value) -> Vec<Scope> {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out: Vec<Scope> = strings(&quota["spec"]["scopes"])
        .into_iter()
        .map(|name| Scope {
            name,
            operator: "Exists".into(),
            values: Vec::new(),
        })
        .collect();
    if let Some(exprs) = quota
        .pointer("/spec/scopeSelector/matchExpressions")
        .and_then(Value::as_array)
    {
        out.extend(exprs.iter().map(|e| Scope {
            name: e["scopeName"].as_str().unwrap_or_default().to_string(),
            operator: e["operator"].as_str().unwrap_or_default().to_string(),
            values: strings(&e["values"]),
        }));
    }
    out
}

/// Does a quota with `scopes` track `obj`, an object of `plural` in `group`?
pub(crate) fn matches(scopes: &[Scope], group: &str, plural: &str, obj: &Value) -> bool {
    if scopes.is_empty() {
        return true;
    }
    if !(group.is_empty() && plural == "pods") {
        return false;
    }
    scopes.iter().all(|s| pod_matches(s, obj))
}

fn pod_matches(scope: &Scope, pod: &Value) -> bool {
    match scope.name.as_str() {
        "Terminating" => is_terminating(pod),
        "NotTerminating" => !is_terminating(pod),
        "BestEffort" => is_best_effort(pod),
        "NotBestEffort" => !is_best_effort(pod),
        "PriorityClass" => {
            let class = pod
                .pointer("/spec/priorityClassName")
                .and_then(Value::as_str)
                .unwrap_or("");
            // As a label selector over the one label `PriorityClass=<class>` (always present,
            // perhaps empty), except that Exists asks for a class.
            match scope.operator.as_str() {
                "Exists" => !class.is_empty(),
                "In" => scope.values.iter().any(|v| v == class),
                "NotIn" => !scope.values.iter().any(|v| v == class),
                _ => false,
            }
        }
        "CrossNamespacePodAffinity" => uses_cross_namespace_affinity(pod),
        _ => false,
    }
}

/// A pod with an active deadline ends by itself.
fn is_terminating(pod: &Value) -> bool {
    pod.pointer("/spec/activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|s| s >= 0)
}

/// The BestEffort QoS class: no container asks for or is limited in CPU or memory.
pub(crate) fn is_best_effort(pod: &Value) -> bool {
    let containers = ["/spec/containers", "/spec/initContainers"]
        .into_iter()
        .filter_map(|p| pod.pointer(p).and_then(Value::as_array))
        .flatten();
    for c in containers {
        for list in ["/resources/requests", "/resources/limits"] {
            let l = super::usage::resource_list(c.pointer(list));
            if ["cpu", "memory"]
                .iter()
                .any(|r| l.get(*r).is_some_and(|v| *v != 0))
            {
                return false;
            }
        }
    }
    true
}

/// Does any pod (anti-)affinity term reach other namespaces (a namespace list or selector)?
fn uses_cross_namespace_affinity(pod: &Value) -> bool {
    let cross = |term: &Value| {
        term["namespaces"].as_array().is_some_and(|a| !a.is_empty())
            || term.get("namespaceSelector").is_some_and(|s| !s.is_null())
    };
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        let a = &pod["spec"]["affinity"][kind];
        let required = a["requiredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .is_some_and(|terms| terms.iter().any(cross));
        let preferred = a["preferredDuringSchedulingIgnoredDuringExecution"]
            .as_array()
            .is_some_and(|terms| terms.iter().any(|w| cross(&w["podAffinityTerm"])));
        required || preferred
    })
}
