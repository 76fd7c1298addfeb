//! The names of a federated Service: global, per region, per cluster, SRV; what is not there;
//! the hub Service's EXTERNAL-IP.

use std::time::Duration;

use crate::common::fleet::eventually;
use crate::kdig::{ask, must};
use crate::{Fleet, ALL, ZONE};

/// `web.demo.ZONE` answers the three ingress addresses; regions and clusters only theirs.
pub(crate) fn fleet_names_resolve(f: &Fleet) {
    f.wait_ips("web.demo", &ALL, Duration::from_secs(60));
    let reply = must(f.dns, &format!("web.demo.{ZONE}"), "A", &[]);
    assert_eq!(reply.status, "NOERROR");
    assert!(
        reply.answer.iter().all(|r| r.ttl == crate::TTL),
        "the GlobalService's ttlSeconds: {}",
        reply.text
    );
    assert_eq!(f.ips("web.demo.eu"), ["127.0.0.11", "127.0.0.12"]);
    assert_eq!(f.ips("web.demo.ap"), ["127.0.0.13"]);
    for (cluster, _, _, ip) in crate::MEMBERS {
        assert_eq!(f.ips(&format!("web.demo.{cluster}")), [ip], "{cluster}");
    }
    // Names are case-insensitive, and TCP answers the same.
    let upper = must(
        f.dns,
        &format!("WEB.Demo.{}", ZONE.to_uppercase()),
        "A",
        &[],
    );
    assert_eq!(upper.ips(), ALL, "{}", upper.text);
    let tcp = must(f.dns, &format!("web.demo.{ZONE}"), "A", &["+tcp"]);
    assert!(tcp.tcp, "{}", tcp.text);
    assert_eq!(tcp.ips(), ALL, "{}", tcp.text);
}

/// NXDOMAIN for an unknown name, NODATA for a known name's missing type, REFUSED outside the
/// zone, SOA and NS at the apex, SRV for the named port.
pub(crate) fn rcodes_and_srv(f: &Fleet) {
    let nx = must(f.dns, &format!("nope.demo.{ZONE}"), "A", &[]);
    assert_eq!(nx.status, "NXDOMAIN", "{}", nx.text);
    assert!(
        nx.authority.iter().any(|r| r.rtype == "SOA"),
        "NXDOMAIN carries the SOA: {}",
        nx.text
    );
    let nodata = must(f.dns, &format!("web.demo.{ZONE}"), "AAAA", &[]);
    assert_eq!(nodata.status, "NOERROR", "{}", nodata.text);
    assert!(nodata.answer.is_empty(), "{}", nodata.text);
    assert!(
        nodata.authority.iter().any(|r| r.rtype == "SOA"),
        "NODATA carries the SOA: {}",
        nodata.text
    );
    let refused = must(f.dns, "example.com", "A", &[]);
    assert_eq!(refused.status, "REFUSED", "{}", refused.text);
    let soa = must(f.dns, ZONE, "SOA", &[]);
    assert_eq!(soa.data("SOA").len(), 1, "{}", soa.text);
    let ns = must(f.dns, ZONE, "NS", &[]);
    assert!(!ns.data("NS").is_empty(), "{}", ns.text);

    let srv = must(f.dns, &format!("_http._tcp.web.demo.{ZONE}"), "SRV", &[]);
    assert_eq!(srv.status, "NOERROR", "{}", srv.text);
    let records = srv.data("SRV");
    assert!(!records.is_empty(), "{}", srv.text);
    for r in &records {
        let fields: Vec<&str> = r.split_whitespace().collect();
        assert_eq!(fields.len(), 4, "{r}");
        assert_eq!(fields[2], f.port.to_string(), "SRV port: {}", srv.text);
    }
    // No SRV for a port name the Service does not have.
    let other = ask(f.dns, &format!("_grpc._tcp.web.demo.{ZONE}"), "SRV", &[]).expect("reply");
    assert!(other.data("SRV").is_empty(), "{}", other.text);
}

/// `kubectl get svc` on the hub shows the fleet name as EXTERNAL-IP.
pub(crate) fn hub_service_shows_the_name(f: &Fleet) {
    let name = format!("web.demo.{ZONE}");
    eventually(
        &f.hub,
        Duration::from_secs(30),
        "the hub Service's hostname",
        || {
            let out = f.hub.kubectl(&["get", "svc", "web", "-n", "demo"]);
            let table = String::from_utf8_lossy(&out.stdout);
            table
                .lines()
                .nth(1)
                .is_some_and(|row| row.split_whitespace().nth(3) == Some(name.as_str()))
        },
    );
    let hostname = f.hub.ok(&[
        "get",
        "svc",
        "web",
        "-n",
        "demo",
        "-o",
        "jsonpath={.status.loadBalancer.ingress[*].hostname}",
    ]);
    assert_eq!(hostname.trim(), name);

    // external-dns gets the same records: a DNSEndpoint owned by the Service.
    eventually(
        &f.hub,
        Duration::from_secs(30),
        "the DNSEndpoint of web with the global name's three addresses",
        || {
            let out = f
                .hub
                .kubectl(&["get", "dnsendpoint", "web", "-n", "demo", "-o", "json"]);
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
            let owned = v["metadata"]["ownerReferences"][0]["kind"] == "Service";
            let global = v["spec"]["endpoints"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|e| e["dnsName"] == name.as_str() && e["recordType"] == "A");
            owned
                && global.is_some_and(|e| {
                    let mut t: Vec<&str> = e["targets"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|t| t.as_str())
                        .collect();
                    t.sort();
                    t == ALL
                })
        },
    );
}
