//! The clusterset mapping: which imports and slices make which answers.

use std::net::IpAddr;

use flotilla_apis::multicluster::ServiceImport;
use flotilla_dns::fleet::FleetService;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use serde_json::json;

use super::{clusterset_fleet, empty, snapshot_options, CLUSTERSET_TTL, DEFAULT_ZONE};

fn import(
    ns: &str,
    name: &str,
    type_: &str,
    ips: &[&str],
    clusters: Option<&[&str]>,
) -> ServiceImport {
    let mut body = json!({
        "apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ServiceImport",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"type": type_, "ips": ips, "ports": [
            {"name": "http", "protocol": "TCP", "port": 80},
            {"protocol": "UDP", "port": 53},
        ]},
    });
    if let Some(clusters) = clusters {
        let clusters: Vec<_> = clusters.iter().map(|c| json!({"cluster": c})).collect();
        body["status"] = json!({"clusters": clusters});
    }
    serde_json::from_value(body).unwrap()
}

/// An agent's copy of a slice of `ns/svc` from `cluster`: endpoints (addresses, ready).
fn slice(
    cluster: &str,
    ns: &str,
    svc: &str,
    endpoints: &[(&[&str], Option<bool>)],
) -> EndpointSlice {
    copy(
        cluster,
        &format!("flotilla-es-{cluster}"),
        ns,
        svc,
        "IPv4",
        endpoints,
    )
}

fn copy(
    cluster: &str,
    at: &str,
    ns: &str,
    svc: &str,
    address_type: &str,
    endpoints: &[(&[&str], Option<bool>)],
) -> EndpointSlice {
    let endpoints: Vec<_> = endpoints
        .iter()
        .map(|(addresses, ready)| match ready {
            Some(ready) => json!({"addresses": addresses, "conditions": {"ready": ready}}),
            None => json!({"addresses": addresses}),
        })
        .collect();
    serde_json::from_value(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": format!("{ns}.{svc}-{cluster}"), "namespace": at, "labels": {
            "multicluster.kubernetes.io/source-cluster": cluster,
            "multicluster.kubernetes.io/service-name": svc,
            "multicluster.flotilla.io/service-namespace": ns,
            "endpointslice.kubernetes.io/managed-by": "mcs.flotilla.io",
        }},
        "addressType": address_type,
        "endpoints": endpoints,
    }))
    .unwrap()
}

fn addresses(service: &FleetService) -> Vec<(String, IpAddr)> {
    service
        .endpoints
        .iter()
        .map(|e| (e.cluster.clone(), e.address))
        .collect()
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

#[test]
fn an_import_answers_every_exporting_clusters_ready_addresses() {
    let imports = [import("shop", "db", "ClusterSetIP", &[], Some(&["a", "b"]))];
    let slices = [
        slice(
            "a",
            "shop",
            "db",
            &[(&["10.1.0.7"], Some(true)), (&["10.1.0.8"], Some(false))],
        ),
        // no ready condition: ready, as the EndpointSlice API reads it
        slice("b", "shop", "db", &[(&["10.2.0.9", "10.2.0.10"], None)]),
        // another Service, and another namespace's Service of the same name
        slice("a", "shop", "web", &[(&["10.1.0.1"], Some(true))]),
        slice("a", "other", "db", &[(&["10.1.0.2"], Some(true))]),
    ];
    let fleet = clusterset_fleet(&imports, &slices);
    assert!(fleet.clusters.is_empty());
    let [db] = fleet.services.as_slice() else {
        panic!("one service: {fleet:?}")
    };
    assert_eq!((db.namespace.as_str(), db.name.as_str()), ("shop", "db"));
    assert_eq!(db.ttl, CLUSTERSET_TTL);
    assert_eq!(
        addresses(db),
        [
            ("a".into(), ip("10.1.0.7")),
            ("b".into(), ip("10.2.0.9")),
            ("b".into(), ip("10.2.0.10")),
        ]
    );
    assert!(db.endpoints.iter().all(|e| e.verdict.is_serving()));
    let ports: Vec<_> = db
        .ports
        .iter()
        .map(|p| (p.name.as_str(), p.protocol.as_str(), p.port))
        .collect();
    assert_eq!(ports, [("http", "TCP", 80), ("", "UDP", 53)]);
}

#[test]
fn cluster_set_ips_are_answered_instead_of_endpoints() {
    let imports = [
        import(
            "shop",
            "db",
            "ClusterSetIP",
            &["10.96.5.5", "not-an-ip"],
            None,
        ),
        // a Headless import has no VIP: its endpoints, even with ips set
        import("shop", "cache", "Headless", &["10.96.6.6"], None),
    ];
    let slices = [
        slice("a", "shop", "db", &[(&["10.1.0.7"], Some(true))]),
        slice("a", "shop", "cache", &[(&["10.1.0.9"], Some(true))]),
    ];
    let fleet = clusterset_fleet(&imports, &slices);
    let names: Vec<_> = fleet.services.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["cache", "db"], "sorted by namespace and name");
    assert_eq!(
        addresses(&fleet.services[0]),
        [("a".into(), ip("10.1.0.9"))]
    );
    assert_eq!(
        addresses(&fleet.services[1]),
        [("clusterset".into(), ip("10.96.5.5"))]
    );
}

#[test]
fn only_agents_copies_from_exporting_clusters_count() {
    let imports = [import("shop", "db", "ClusterSetIP", &[], Some(&["a", "b"]))];
    let mut unmanaged = slice("b", "shop", "db", &[(&["10.2.0.2"], Some(true))]);
    unmanaged
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .remove("endpointslice.kubernetes.io/managed-by");
    let slices = [
        // c no longer exports (not in the import's status)
        slice("c", "shop", "db", &[(&["10.3.0.3"], Some(true))]),
        // a slice claiming cluster b, but in a's namespace: a cannot speak for b
        copy(
            "b",
            "flotilla-es-a",
            "shop",
            "db",
            "IPv4",
            &[(&["10.2.0.1"], Some(true))],
        ),
        unmanaged,
        // FQDN slices have no address to answer
        copy(
            "a",
            "flotilla-es-a",
            "shop",
            "db",
            "FQDN",
            &[(&["db.example"], Some(true))],
        ),
        // the same address from two clusters is answered once
        slice("a", "shop", "db", &[(&["10.9.0.1"], Some(true))]),
        slice("b", "shop", "db", &[(&["10.9.0.1"], Some(true))]),
    ];
    let fleet = clusterset_fleet(&imports, &slices);
    assert_eq!(
        addresses(&fleet.services[0]),
        [("a".into(), ip("10.9.0.1"))]
    );
}

#[test]
fn an_import_without_ready_endpoints_is_still_a_name() {
    let imports = [
        import("shop", "db", "ClusterSetIP", &[], Some(&[])),
        import("shop", "idle", "ClusterSetIP", &[], None),
    ];
    let slices = [slice("a", "shop", "db", &[(&["10.1.0.7"], Some(true))])];
    let fleet = clusterset_fleet(&imports, &slices);
    assert_eq!(fleet.services.len(), 2);
    assert!(fleet.services.iter().all(|s| s.endpoints.is_empty()));
    // the same inputs give the same fleet (the source swaps snapshots only on a change)
    assert_eq!(fleet, clusterset_fleet(&imports, &slices));
}

#[test]
fn the_snapshot_names_services_under_svc_of_the_zone() {
    let imports = [import("shop", "db", "ClusterSetIP", &[], None)];
    let slices = [slice("a", "shop", "db", &[(&["10.1.0.7"], Some(true))])];
    let fleet = clusterset_fleet(&imports, &slices);
    let snapshot = flotilla_dns::snapshot::Snapshot::build(
        DEFAULT_ZONE,
        &fleet,
        &Default::default(),
        &snapshot_options(),
    )
    .unwrap();
    assert_eq!(snapshot.zone(), "clusterset.local");
    for name in [
        "clusterset.local",
        "svc.clusterset.local",
        "db.shop.svc.clusterset.local",
        "_http._tcp.db.shop.svc.clusterset.local",
    ] {
        assert!(snapshot.contains(name), "{name} missing");
    }
    for name in ["db.shop.clusterset.local", "db.shop.a.svc.clusterset.local"] {
        assert!(!snapshot.contains(name), "{name} answered");
    }
    assert!(empty("not..a zone").is_err());
    let apex = empty(DEFAULT_ZONE).unwrap();
    assert!(apex.contains("clusterset.local") && !apex.contains("svc.clusterset.local"));
}
