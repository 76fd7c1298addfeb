use super::*;

#[test]
fn aggregated_discovery_is_negotiated() {
    assert_eq!(wants_aggregated(Some("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")), Some("v2"));
    assert_eq!(wants_aggregated(Some("application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")), Some("v2beta1"));
    assert_eq!(wants_aggregated(Some("application/json")), None);
    assert_eq!(wants_aggregated(None), None);
}

#[test]
fn resource_list_has_subresources() {
    let reg = crate::registry::Registry::new();
    let snap = reg.snapshot();
    let l = resource_list(&snap, "apps", "v1", |_| None).unwrap();
    let deployments = l["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deployments");
    assert_eq!(deployments.unwrap()["storageVersionHash"], "8aSe+NMegvE=");
    let names: Vec<&str> = l["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"deployments")
            && names.contains(&"deployments/status")
            && names.contains(&"deployments/scale")
    );
    let agg = aggregated(&snap, false, "v2");
    assert!(agg["items"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["metadata"]["name"] == "apps"));
}
