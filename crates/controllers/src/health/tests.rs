use super::*;
use flotilla_apis::cluster::v1alpha1::{ClusterSpec, ClusterStatus};
use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;

fn cond(type_: &str, status: &str, at: Timestamp) -> Condition {
    Condition {
        type_: type_.into(),
        status: status.into(),
        reason: "R".into(),
        message: String::new(),
        observed_generation: None,
        last_transition_time: Time(at),
    }
}

fn cluster(conditions: Vec<Condition>) -> Cluster {
    let mut c = Cluster::new("m1", ClusterSpec::default());
    c.status = Some(ClusterStatus {
        conditions,
        ..Default::default()
    });
    c
}

fn lease(renewed: Timestamp) -> Lease {
    Lease {
        spec: Some(LeaseSpec {
            renew_time: Some(MicroTime(renewed)),
            ..Default::default()
        }),
        ..Default::default()
    }
}

#[test]
fn verdicts() {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let grace = Duration::from_secs(40);
    let later = |s: i64| t0 + k8s_openapi::jiff::SignedDuration::from_secs(s);
    let joined = cond(CONDITION_JOINED, "True", t0);
    // Not joined: no opinion.
    assert_eq!(judge(&cluster(vec![]), None, later(100), grace), None);
    // Fresh lease, Ready=True: no taints.
    let ready = cluster(vec![joined.clone(), cond(CONDITION_READY, "True", t0)]);
    assert_eq!(
        judge(&ready, Some(&lease(later(30))), later(50), grace),
        Some(Verdict {
            unknown_since: None,
            taints: vec![]
        })
    );
    // Lease silent past the grace period: Unknown and unreachable.
    assert_eq!(
        judge(&ready, Some(&lease(later(0))), later(41), grace),
        Some(Verdict {
            unknown_since: Some(41),
            taints: vec![TAINT_UNREACHABLE]
        })
    );
    // No lease yet: counted from the time it joined.
    assert_eq!(
        judge(&ready, None, later(39), grace).unwrap().unknown_since,
        None
    );
    // The agent says its member is unreachable.
    let not_ready = cluster(vec![joined, cond(CONDITION_READY, "False", t0)]);
    assert_eq!(
        judge(&not_ready, Some(&lease(later(5))), later(6), grace),
        Some(Verdict {
            unknown_since: None,
            taints: vec![TAINT_NOT_READY]
        })
    );
}
