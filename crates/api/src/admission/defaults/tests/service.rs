//! Services, and the `ipFamilyPolicy` an update keeps.

use serde_json::json;

use super::*;

#[test]
fn services() {
    let s = defaulted(
        "",
        "v1",
        "services",
        json!({"spec": {"selector": {"app": "web"}, "ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]}}),
    );
    assert_eq!(
        s["spec"],
        json!({
            "selector": {"app": "web"},
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}],
            "sessionAffinity": "None", "type": "ClusterIP",
            "internalTrafficPolicy": "Cluster", "ipFamilyPolicy": "SingleStack",
        })
    );
    assert!(
        s["spec"].get("clusterIP").is_none(),
        "addresses are not allocated here"
    );
    let lb = defaulted(
        "",
        "v1",
        "services",
        json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP", "ports": [{"port": 443, "targetPort": 0}]},
               "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "lb"}]}}}),
    );
    let spec = &lb["spec"];
    assert_eq!(spec["externalTrafficPolicy"], "Cluster");
    assert_eq!(spec["allocateLoadBalancerNodePorts"], true);
    assert_eq!(
        spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"],
        10800
    );
    assert_eq!(spec["ports"][0]["targetPort"], 443);
    assert_eq!(lb["status"]["loadBalancer"]["ingress"][0]["ipMode"], "VIP");
    assert!(lb["status"]["loadBalancer"]["ingress"][1]
        .get("ipMode")
        .is_none());
    let headless = defaulted("", "v1", "services", json!({"spec": {"clusterIP": "None"}}));
    assert_eq!(headless["spec"]["ipFamilyPolicy"], "RequireDualStack");
    let external = defaulted(
        "",
        "v1",
        "services",
        json!({"spec": {"type": "ExternalName", "externalName": "example.com", "sessionAffinityConfig": {}}}),
    );
    assert_eq!(
        external["spec"],
        json!({"type": "ExternalName", "externalName": "example.com", "sessionAffinity": "None"})
    );
    // An update without a policy keeps the stored one.
    let old = json!({"spec": {"ipFamilyPolicy": "PreferDualStack"}});
    let mut new = json!({"spec": {"selector": {"a": "b"}}});
    on_update(&res("", "v1", "services"), &old, &mut new);
    assert_eq!(new["spec"]["ipFamilyPolicy"], "PreferDualStack");
}
