use std::collections::{BTreeMap, BTreeSet};

use flotilla_apis::multicluster::{
    MANAGED_BY, SERVICE_NAMESPACE_LABEL, SERVICE_NAME_LABEL, SOURCE_CLUSTER_LABEL,
};
use flotilla_apis::work::v1alpha1::ResourceBinding;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::{json, Value};

use super::import_work_name;
use super::plan::*;

fn service(cluster_ip: Option<&str>, ports: Value) -> Service {
    let mut spec = json!({"ports": ports, "sessionAffinity": "None"});
    if let Some(ip) = cluster_ip {
        spec["clusterIP"] = json!(ip);
    }
    serde_json::from_value(json!({"metadata": {"name": "web", "namespace": "shop"}, "spec": spec}))
        .unwrap()
}

fn binding(ns: &str, kind: &str, name: &str, clusters: &[&str]) -> ResourceBinding {
    let targets: Vec<Value> = clusters.iter().map(|c| json!({"name": c})).collect();
    serde_json::from_value(json!({
        "metadata": {"name": format!("{name}-{}", kind.to_lowercase()), "namespace": ns},
        "spec": {"resource": {"apiVersion": if kind == "Deployment" {"apps/v1"} else {"v1"},
                              "kind": kind, "namespace": ns, "name": name},
                 "clusters": targets},
    }))
    .unwrap()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn exporting_clusters_are_the_services_binding_and_members_all_of_the_namespace() {
    let bindings = [
        binding("shop", "Service", "web", &["a", "b"]),
        binding("shop", "Deployment", "web", &["a", "b", "c"]),
        binding("shop", "Service", "db", &["d"]),
        binding("other", "Service", "web", &["e"]),
    ];
    let placed: Vec<Placed> = bindings.iter().map(Placed::of).collect();
    assert_eq!(placed[0].service.as_deref(), Some("web"));
    assert_eq!(placed[1].service, None, "a Deployment of the same name");
    assert_eq!(exporting_clusters(&placed, "shop", "web"), set(&["a", "b"]));
    assert_eq!(
        namespace_clusters(&placed, "shop"),
        set(&["a", "b", "c", "d"])
    );
}

#[test]
fn validity() {
    let ports = json!([{"name": "http", "port": 80}]);
    let some = set(&["a"]);
    assert_eq!(invalid(None, &some).unwrap().0, REASON_NO_SERVICE);
    let mut external = service(None, ports.clone());
    external.spec.as_mut().unwrap().type_ = Some("ExternalName".into());
    assert_eq!(
        invalid(Some(&external), &some).unwrap().0,
        REASON_TYPE_INVALID
    );
    let svc = service(None, ports);
    assert_eq!(
        invalid(Some(&svc), &set(&[])).unwrap().0,
        REASON_NOT_PROPAGATED
    );
    assert!(invalid(Some(&svc), &some).is_none());
}

#[test]
fn import_follows_the_service() {
    let ports = json!([{"name": "http", "port": 80, "targetPort": 8080},
                       {"name": "dns", "port": 53, "protocol": "UDP"}]);
    let exporting = set(&["b", "a"]);
    let import = service_import(&service(Some("10.96.0.10"), ports.clone()), &exporting);
    assert_eq!(import.spec.type_, "ClusterSetIP");
    assert_eq!(import.spec.session_affinity.as_deref(), Some("None"));
    let got: Vec<(Option<&str>, Option<&str>, i32)> = import
        .spec
        .ports
        .iter()
        .map(|p| (p.name.as_deref(), p.protocol.as_deref(), p.port))
        .collect();
    assert_eq!(
        got,
        [
            (Some("http"), Some("TCP"), 80),
            (Some("dns"), Some("UDP"), 53)
        ]
    );
    let clusters: Vec<&str> = import
        .status
        .as_ref()
        .unwrap()
        .clusters
        .iter()
        .map(|c| c.cluster.as_str())
        .collect();
    assert_eq!(clusters, ["a", "b"]);
    let headless = service_import(&service(Some("None"), ports), &exporting);
    assert_eq!(headless.spec.type_, "Headless");
}

#[test]
fn conflicts_name_the_disagreeing_clusters() {
    let svc = |ip: &str, ports: Value| shape(&json!({"spec": {"clusterIP": ip, "ports": ports}}));
    let http = json!([{"name": "http", "port": 80}, {"name": "m", "port": 9000}]);
    // The same ports in another order, TCP spelled out: no conflict.
    let same =
        json!([{"name": "m", "port": 9000, "protocol": "TCP"}, {"name": "http", "port": 80}]);
    let other = json!([{"name": "http", "port": 8080}]);
    let agree = BTreeMap::from([
        ("a".to_string(), svc("1.1.1.1", http.clone())),
        ("b".into(), svc("2.2.2.2", same)),
    ]);
    assert_eq!(conflict(&agree), None);
    let ports = BTreeMap::from([
        ("a".to_string(), svc("1.1.1.1", http.clone())),
        ("b".into(), svc("2.2.2.2", other)),
        ("c".into(), svc("3.3.3.3", http.clone())),
    ]);
    let (reason, message) = conflict(&ports).unwrap();
    assert_eq!(reason, REASON_PORT_CONFLICT);
    assert!(
        message.contains("a,c [http:80/TCP m:9000/TCP]"),
        "{message}"
    );
    assert!(message.contains("b [http:8080/TCP]"), "{message}");
    let types = BTreeMap::from([
        ("a".to_string(), svc("1.1.1.1", http.clone())),
        ("b".into(), svc("None", http)),
    ]);
    assert_eq!(conflict(&types).unwrap().0, REASON_TYPE_CONFLICT);
}

fn hub_slice(cluster: &str, name: &str, ip: &str) -> EndpointSlice {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": format!("flotilla-es-{cluster}"),
                     "labels": {SOURCE_CLUSTER_LABEL: cluster, SERVICE_NAME_LABEL: "web",
                                SERVICE_NAMESPACE_LABEL: "shop",
                                "endpointslice.kubernetes.io/managed-by": MANAGED_BY}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": [ip], "conditions": {"ready": true}}],
        "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
    }))
    .unwrap()
}

#[test]
fn members_receive_the_import_then_every_clusters_slices() {
    let import = service_import(
        &service(None, json!([{"name": "http", "port": 80}])),
        &set(&["a", "b"]),
    );
    let b = hub_slice("b", "shop.web-2", "10.2.0.1");
    let a = hub_slice("a", "shop.web-1", "10.1.0.1");
    let manifests = import_manifests(&import, &[&b, &a]);
    assert_eq!(manifests[0]["kind"], "ServiceImport");
    assert_eq!(manifests[0]["apiVersion"], "multicluster.x-k8s.io/v1alpha1");
    assert_eq!(manifests[0]["metadata"]["namespace"], "shop");
    let names: Vec<&str> = manifests[1..]
        .iter()
        .map(|m| m["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a.web-1", "b.web-2"]);
    let slice = &manifests[1];
    assert_eq!(slice["metadata"]["namespace"], "shop");
    assert_eq!(slice["metadata"]["labels"][SOURCE_CLUSTER_LABEL], "a");
    assert_eq!(slice["metadata"]["labels"][SERVICE_NAME_LABEL], "web");
    assert!(slice["metadata"]["labels"]
        .get("kubernetes.io/service-name")
        .is_none());
    assert_eq!(slice["endpoints"][0]["addresses"][0], "10.1.0.1");
}

#[test]
fn import_work_names_never_look_like_a_bindings() {
    // A binding's Work is `<ns>.<name>-<kind>`: its last `-` is followed by a kind, never a dot.
    let name = import_work_name("shop", "web-x");
    let tail = name.rsplit_once('-').unwrap().1;
    assert!(tail.contains('.'), "{name}");
}
