use serde_json::json;

use super::*;

#[test]
fn a_bare_global_service_takes_the_defaults() {
    let spec: GlobalServiceSpec = serde_json::from_value(json!({})).unwrap();
    assert_eq!(spec.strategy.type_, StrategyType::RoundRobin);
    assert_eq!(spec.ttl_seconds, None);
    let check = spec.health_check.unwrap_or_default();
    assert_eq!(check.protocol, ProbeProtocol::Tcp);
    assert_eq!(
        (
            check.interval(),
            check.timeout(),
            check.failures(),
            check.successes()
        ),
        (10, 2, 2, 1)
    );
}

#[test]
fn strategies_and_protocols_read_as_the_issue_spells_them() {
    let spec: GlobalServiceSpec = serde_json::from_value(json!({
        "ttlSeconds": 5,
        "strategy": {"type": "Weighted", "weights": [{"region": "eu", "weight": 3}, {"cluster": "m1", "weight": 1}]},
        "healthCheck": {"protocol": "HTTPS", "port": 8443, "path": "/healthz", "failureThreshold": 3}
    }))
    .unwrap();
    assert_eq!(spec.strategy.type_, StrategyType::Weighted);
    assert_eq!(spec.strategy.weights[1].cluster.as_deref(), Some("m1"));
    let check = spec.health_check.unwrap();
    assert_eq!(check.protocol, ProbeProtocol::Https);
    assert_eq!(check.failures(), 3);
    let back = serde_json::to_value(&check).unwrap();
    assert_eq!(back["protocol"], "HTTPS");
    for bad in [
        json!({"strategy": {"type": "Nearest"}}),
        json!({"healthCheck": {"protocol": "UDP"}}),
    ] {
        assert!(serde_json::from_value::<GlobalServiceSpec>(bad).is_err());
    }
}

#[test]
fn a_health_report_round_trips() {
    let report: HealthReportStatus = serde_json::from_value(json!({
        "reportTime": "2026-11-28T05:00:00Z", "targets": 1, "down": 1,
        "results": [{"namespace": "web", "name": "shop", "cluster": "m1", "address": "127.0.0.2",
                     "port": 80, "up": false, "message": "connection refused"}]
    }))
    .unwrap();
    assert!(!report.results[0].up);
    let back = serde_json::to_value(&report).unwrap();
    assert_eq!(back["results"][0]["address"], "127.0.0.2");
}
