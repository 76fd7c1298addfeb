//! Service defaults: `SetDefaults_Service`, and the `ipFamilyPolicy` kube-apiserver's service
//! storage infers before it allocates addresses (the addresses themselves — `clusterIP(s)`,
//! `ipFamilies`, node ports — belong to the cluster that runs the Service and are not set here).

use serde_json::{json, Value};

use super::{child, default_ptr, default_str, each, existing, is_nil, set, str_of};

/// `DefaultClientIPServiceAffinitySeconds`: three hours.
const CLIENT_IP_AFFINITY_SECONDS: i64 = 10800;

/// `SetDefaults_Service` and the create-time `ipFamilyPolicy`.
pub(super) fn service(obj: &mut Value) {
    let Some(spec) = child(obj, "spec") else {
        return;
    };
    default_str(spec, "sessionAffinity", "None");
    match str_of(spec, "sessionAffinity") {
        "None" => {
            if let Some(m) = spec.as_object_mut() {
                m.remove("sessionAffinityConfig");
            }
        }
        "ClientIP" => {
            let timeout = spec.pointer("/sessionAffinityConfig/clientIP/timeoutSeconds");
            if is_nil(timeout) {
                let config = json!({"clientIP": {"timeoutSeconds": CLIENT_IP_AFFINITY_SECONDS}});
                set(spec, "sessionAffinityConfig", config);
            }
        }
        _ => {}
    }
    default_str(spec, "type", "ClusterIP");
    each(spec, "ports", |p| {
        default_str(p, "protocol", "TCP");
        let target = p.get("targetPort");
        if is_nil(target) || target == Some(&json!(0)) || target == Some(&json!("")) {
            let port = p.get("port").cloned().unwrap_or(json!(0));
            set(p, "targetPort", port);
        }
    });
    let kind = str_of(spec, "type").to_string();
    let external_ips = spec
        .get("externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty());
    let externally_accessible = matches!(kind.as_str(), "LoadBalancer" | "NodePort")
        || (kind == "ClusterIP" && external_ips);
    if externally_accessible {
        default_str(spec, "externalTrafficPolicy", "Cluster");
    }
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        default_ptr(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        default_ptr(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    if kind != "ExternalName" && is_nil(spec.get("ipFamilyPolicy")) {
        // Headless and selectorless: a set of endpoints of any family.
        let headless = str_of(spec, "clusterIP") == "None";
        let selectorless = spec
            .get("selector")
            .and_then(Value::as_object)
            .is_none_or(|s| s.is_empty());
        let policy = if headless && selectorless {
            "RequireDualStack"
        } else {
            "SingleStack"
        };
        set(spec, "ipFamilyPolicy", json!(policy));
    }
    if kind == "LoadBalancer" {
        // `LoadBalancerIPMode` (beta, on since 1.30).
        let ingress = existing(obj, "status")
            .and_then(|s| existing(s, "loadBalancer"))
            .and_then(|lb| lb.get_mut("ingress"))
            .and_then(Value::as_array_mut);
        for ing in ingress.into_iter().flatten() {
            if !str_of(ing, "ip").is_empty() {
                default_ptr(ing, "ipMode", json!("VIP"));
            }
        }
    }
}

/// An update that leaves `ipFamilyPolicy` out keeps the one the Service had
/// (`initIPFamilyFields`), rather than the create-time default.
pub(super) fn carry_over(old: &Value, new: &mut Value) {
    let had = old.pointer("/spec/ipFamilyPolicy").filter(|p| !p.is_null());
    if let (Some(policy), Some(spec)) = (had, new.get_mut("spec")) {
        if spec.is_object() && str_of(spec, "type") != "ExternalName" {
            default_ptr(spec, "ipFamilyPolicy", policy.clone());
        }
    }
}
