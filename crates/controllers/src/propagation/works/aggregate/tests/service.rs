//! A Service's load-balancer ingress: the members' union, or the fleet name with a DNS zone.

use super::*;

#[test]
fn service_ingress_is_the_union_in_cluster_order() {
    let lb = json!({ "apiVersion": "v1", "kind": "Service", "spec": { "type": "LoadBalancer" } });
    let (east, west, north) = (
        json!({ "loadBalancer": { "ingress": [{ "ip": "203.0.113.1" }, { "ip": "203.0.113.9" }] } }),
        json!({ "loadBalancer": { "ingress": [{ "ip": "203.0.113.9" }, { "hostname": "w.example" }] } }),
        json!({ "loadBalancer": {} }),
    );
    let members = [
        member("west", &west, true),
        member("north", &north, true),
        member("east", &east, true),
    ];
    assert_eq!(
        aggregate(&lb, &members, NOW, None),
        Some(json!({ "loadBalancer": { "ingress": [
            { "ip": "203.0.113.1" },
            { "ip": "203.0.113.9" },
            { "hostname": "w.example" },
        ] } }))
    );
    assert_eq!(
        aggregate(&lb, &[member("north", &north, true)], NOW, None),
        Some(json!({ "loadBalancer": {} }))
    );
    let cluster_ip =
        json!({ "apiVersion": "v1", "kind": "Service", "spec": { "type": "ClusterIP" } });
    assert_eq!(
        aggregate(&cluster_ip, &members, NOW, None),
        Some(json!({ "loadBalancer": {} }))
    );
}

#[test]
fn service_ingress_is_the_fleet_name_with_a_dns_zone() {
    let lb = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": { "name": "web", "namespace": "shop" },
        "spec": { "type": "LoadBalancer" },
    });
    let (east, west, pending, named) = (
        json!({ "loadBalancer": { "ingress": [{ "ip": "203.0.113.1" }] } }),
        json!({ "loadBalancer": { "ingress": [{ "ip": "2001:db8::9" }] } }),
        json!({ "loadBalancer": {} }),
        json!({ "loadBalancer": { "ingress": [{ "hostname": "w.example" }] } }),
    );
    let fleet =
        json!({ "loadBalancer": { "ingress": [{ "hostname": "web.shop.fleet.example" }] } });
    let members = [member("east", &east, true), member("west", &west, true)];
    for zone in ["fleet.example", "fleet.example."] {
        assert_eq!(
            aggregate(&lb, &members, NOW, Some(zone)),
            Some(fleet.clone())
        );
    }
    // One member with an address is enough for the name to resolve.
    let some = [member("east", &east, true), member("north", &pending, true)];
    assert_eq!(
        aggregate(&lb, &some, NOW, Some("fleet.example")),
        Some(fleet)
    );
    // No address yet: the name would answer nothing, so the Service stays pending.
    assert_eq!(
        aggregate(
            &lb,
            &[member("north", &pending, true)],
            NOW,
            Some("fleet.example")
        ),
        Some(json!({ "loadBalancer": {} }))
    );
    // Hostnames only: DNS cannot carry them under the fleet name, so they are shown as they are.
    assert_eq!(
        aggregate(
            &lb,
            &[member("west", &named, true)],
            NOW,
            Some("fleet.example")
        ),
        Some(named.clone())
    );
    // Not a LoadBalancer: nothing to name.
    let cluster_ip = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": { "name": "web", "namespace": "shop" },
        "spec": { "type": "ClusterIP" },
    });
    assert_eq!(
        aggregate(&cluster_ip, &members, NOW, Some("fleet.example")),
        Some(json!({ "loadBalancer": {} }))
    );
}

#[test]
fn fleet_hostname_needs_name_and_namespace() {
    let svc = json!({ "metadata": { "name": "web", "namespace": "shop" } });
    assert_eq!(
        fleet_hostname(&svc, "z.example").as_deref(),
        Some("web.shop.z.example")
    );
    assert_eq!(
        fleet_hostname(&json!({ "metadata": { "name": "web" } }), "z.example"),
        None
    );
}
