use std::sync::Arc;

use flotilla_apis::networking::v1alpha1::{HealthReportStatus, ProbeResult};
use flotilla_dns::fleet::Verdict;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde_json::json;

use super::*;

const NOW: &str = "2026-11-28T06:00:00Z";

fn now() -> Timestamp {
    NOW.parse().unwrap()
}

fn world(reports: Vec<HealthReport>, global: Option<serde_json::Value>) -> World {
    let cluster = |name: &str, region: &str| -> Arc<Cluster> {
        Arc::new(
            serde_json::from_value(json!({
                "apiVersion": "cluster.flotilla.io/v1alpha1", "kind": "Cluster",
                "metadata": {"name": name},
                "spec": {"region": region, "networks": ["10.1.0.0/16", "bad"]},
            }))
            .unwrap(),
        )
    };
    let service: Service = serde_json::from_value(json!({
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
        "spec": {"type": "LoadBalancer", "ports": [{"name": "http", "port": 80}]},
    }))
    .unwrap();
    let binding: ResourceBinding = serde_json::from_value(json!({
        "apiVersion": "work.flotilla.io/v1alpha1", "kind": "ResourceBinding",
        "metadata": {"name": "web-service", "namespace": "shop"},
        "spec": {"resource": {"apiVersion": "v1", "kind": "Service", "namespace": "shop", "name": "web", "uid": "u1"}},
        "status": {"aggregatedStatus": [
            {"clusterName": "a", "applied": true, "status": {
                "clusterIPs": ["fd00::a", "bad", "10.96.0.10"],
                "loadBalancer": {"ingress": [{"ip": "192.0.2.1"}]},
            }},
            {"clusterName": "b", "applied": true, "status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.2"}, {"hostname": "x"}]}}},
        ]},
    })).unwrap();
    World {
        clusters: vec![cluster("a", "eu"), cluster("b", "us")],
        services: vec![Arc::new(service)],
        bindings: vec![Arc::new(binding)],
        global_services: global
            .map(|g| Arc::new(serde_json::from_value(g).unwrap()))
            .into_iter()
            .collect(),
        reports: reports.into_iter().map(Arc::new).collect(),
    }
}

fn report(voter: &str, age_secs: i64, down: &[&str]) -> HealthReport {
    let time = now() - k8s_openapi::jiff::SignedDuration::from_secs(age_secs);
    let results = [("a", "192.0.2.1"), ("b", "192.0.2.2")]
        .iter()
        .map(|(c, a)| ProbeResult {
            namespace: "shop".into(),
            name: "web".into(),
            cluster: (*c).into(),
            address: (*a).into(),
            port: 80,
            up: !down.contains(c),
            ..ProbeResult::default()
        })
        .collect();
    let mut r = HealthReport::new("endpoints", Default::default());
    r.metadata.namespace = Some(format!("flotilla-es-{voter}"));
    r.status = Some(HealthReportStatus {
        report_time: Some(Time(time)),
        results,
        ..HealthReportStatus::default()
    });
    r
}

fn verdicts(w: &World) -> Vec<Verdict> {
    fleet_of(w, now()).services[0]
        .endpoints
        .iter()
        .map(|e| e.verdict)
        .collect()
}

#[test]
fn endpoints_regions_and_defaults() {
    let fleet = fleet_of(&world(vec![], None), now());
    assert_eq!(fleet.clusters.len(), 2);
    assert_eq!(fleet.clusters[0].networks.len(), 1);
    let svc = &fleet.services[0];
    assert_eq!((svc.ttl, &svc.strategy), (30, &Strategy::RoundRobin));
    let eps: Vec<_> = svc
        .endpoints
        .iter()
        .map(|e| {
            (
                e.cluster.as_str(),
                e.region.as_deref(),
                e.address.to_string(),
            )
        })
        .collect();
    assert_eq!(
        eps,
        [
            ("a", Some("eu"), "192.0.2.1".to_owned()),
            ("b", Some("us"), "192.0.2.2".to_owned())
        ]
    );
    assert_eq!(
        verdicts(&world(vec![], None)),
        [Verdict::Unknown, Verdict::Unknown]
    );
    let j = judge(&world(vec![], None), now());
    assert_eq!(j[0].check.port, Some(80));
    assert_eq!(
        (
            j[0].check.interval_seconds,
            j[0].check.timeout_seconds,
            j[0].check.failure_threshold,
            j[0].check.success_threshold
        ),
        (10, 2, 2, 1)
    );
}

#[test]
fn members_cluster_ips_go_with_their_endpoints() {
    let fleet = fleet_of(&world(vec![], None), now());
    let ips: Vec<_> = fleet.services[0]
        .endpoints
        .iter()
        .map(|e| (e.cluster.as_str(), e.cluster_ip.map(|ip| ip.to_string())))
        .collect();
    // a: the ClusterIP of its ingress address's family; b reported none.
    assert_eq!(ips, [("a", Some("10.96.0.10".to_owned())), ("b", None)]);

    let ip = |s: &str| -> IpAddr { s.parse().unwrap() };
    let dual = [ip("10.96.0.10"), ip("fd00::a")];
    assert_eq!(
        cluster_ip_for(&dual, ip("2001:db8::1")),
        Some(ip("fd00::a"))
    );
    assert_eq!(
        cluster_ip_for(&dual, ip("192.0.2.1")),
        Some(ip("10.96.0.10"))
    );
    // Single-stack of the other family: still the member's own address.
    assert_eq!(
        cluster_ip_for(&dual[1..], ip("192.0.2.1")),
        Some(ip("fd00::a"))
    );
    assert_eq!(cluster_ip_for(&[], ip("192.0.2.1")), None);
}

#[test]
fn majority_of_fresh_voters_decides() {
    // One of three sees a down: stays healthy; two of three: unhealthy.
    let w = world(
        vec![
            report("x", 1, &["a"]),
            report("y", 1, &[]),
            report("z", 1, &[]),
        ],
        None,
    );
    assert_eq!(verdicts(&w), [Verdict::Healthy, Verdict::Healthy]);
    let w = world(
        vec![
            report("x", 1, &["a"]),
            report("y", 1, &["a"]),
            report("z", 1, &[]),
        ],
        None,
    );
    assert_eq!(verdicts(&w), [Verdict::Unhealthy, Verdict::Healthy]);
    // Stale reports (older than 3 × 10 s) do not count.
    let w = world(
        vec![
            report("x", 31, &["a"]),
            report("y", 31, &["a"]),
            report("z", 1, &[]),
        ],
        None,
    );
    assert_eq!(verdicts(&w), [Verdict::Healthy, Verdict::Healthy]);
    // Reports outside execution namespaces do not count.
    let mut r = report("x", 1, &["a"]);
    r.metadata.namespace = Some("shop".into());
    assert_eq!(
        verdicts(&world(vec![r], None)),
        [Verdict::Unknown, Verdict::Unknown]
    );
}

#[test]
fn global_service_tunes_and_fail_open() {
    let g = json!({
        "apiVersion": "networking.flotilla.io/v1alpha1", "kind": "GlobalService",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"ttlSeconds": 5, "strategy": {"type": "Failover", "primaryRegion": "eu"},
                 "healthCheck": {"protocol": "HTTP", "port": 80, "intervalSeconds": 1}},
    });
    let w = world(vec![report("x", 2, &["a", "b"])], Some(g.clone()));
    let j = &judge(&w, now())[0];
    assert_eq!(j.service.ttl, 5);
    assert_eq!(
        j.service.strategy,
        Strategy::Failover {
            primary_region: "eu".into()
        }
    );
    assert_eq!(j.check.path.as_deref(), Some("/"));
    // 2 s old with a 1 s interval is fresh; both down: fail open.
    assert!(flotilla_dns::verdict::fail_open(&j.service.endpoints));
    let status = crate::dns::controller::desired::global_status(j, "z.example", None, now());
    assert!(status.fail_open);
    assert_eq!((status.healthy_endpoints, status.total_endpoints), (0, 2));
    assert_eq!(status.names[0], "web.shop.z.example");
    let records = crate::dns::controller::desired::records(&j.service, "z.example");
    assert_eq!(records[0].targets, ["192.0.2.1", "192.0.2.2"]);
    assert!(records
        .iter()
        .any(|r| r.record_type == "CNAME" && r.dns_name == "web.shop.eu.z.example"));
    // 4 s old is stale for a 1 s interval: Unknown again.
    let w = world(vec![report("x", 4, &["a", "b"])], Some(g));
    assert_eq!(verdicts(&w), [Verdict::Unknown, Verdict::Unknown]);
    assert_eq!(
        crate::dns::controller::desired::targets(&judge(&w, now())).len(),
        2
    );
}
