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

/// Silence is counted on the hub's clock from when a renewal was seen, whatever time the
/// agent wrote: an agent five minutes behind or ahead is judged like one on time.
#[test]
fn heartbeats_are_timed_by_the_hub_clock() {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let at = |s: i64| t0 + k8s_openapi::jiff::SignedDuration::from_secs(s);
    let mut heard = heard::Heard::default();
    // First sight (no Lease yet, or one written 5 minutes in the past): heard now.
    assert_eq!(heard.observe("m1", None, at(0)), at(0));
    assert_eq!(heard.observe("m1", Some(&lease(at(-300))), at(2)), at(2));
    // The agent renews (its clock 5 minutes behind): heard when the hub saw it.
    assert_eq!(heard.observe("m1", Some(&lease(at(-298))), at(4)), at(4));
    // No renewal since: still the last time it was heard, however old or new renewTime is.
    assert_eq!(heard.observe("m1", Some(&lease(at(-298))), at(60)), at(4));
    // An agent 5 minutes ahead that stops: silent from when it was last heard.
    assert_eq!(heard.observe("m2", Some(&lease(at(300))), at(10)), at(10));
    assert_eq!(heard.observe("m2", Some(&lease(at(300))), at(55)), at(10));
    // Forgotten clusters start again from first sight.
    heard.retain(|name| name == "m2");
    assert_eq!(heard.observe("m1", Some(&lease(at(-298))), at(70)), at(70));
}

#[test]
fn verdicts() {
    let t0: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let grace = Duration::from_secs(40);
    let later = |s: i64| t0 + k8s_openapi::jiff::SignedDuration::from_secs(s);
    let joined = cond(CONDITION_JOINED, "True", t0);
    // Not joined: no opinion.
    assert_eq!(judge(&cluster(vec![]), t0, later(100), grace), None);
    // Fresh lease, Ready=True: no taints.
    let ready = cluster(vec![joined.clone(), cond(CONDITION_READY, "True", t0)]);
    assert_eq!(
        judge(&ready, later(30), later(50), grace),
        Some(Verdict {
            unknown_since: None,
            taints: vec![]
        })
    );
    // Lease silent past the grace period: Unknown and unreachable.
    assert_eq!(
        judge(&ready, later(0), later(41), grace),
        Some(Verdict {
            unknown_since: Some(41),
            taints: vec![TAINT_UNREACHABLE]
        })
    );
    // The agent says its member is unreachable.
    let not_ready = cluster(vec![joined, cond(CONDITION_READY, "False", t0)]);
    assert_eq!(
        judge(&not_ready, later(5), later(6), grace),
        Some(Verdict {
            unknown_since: None,
            taints: vec![TAINT_NOT_READY]
        })
    );
}
