use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::*;

fn lease(holder: &str, renewed_secs_ago: i64, duration: i32) -> Lease {
    let now = Timestamp::now();
    Lease {
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(duration),
            renew_time: Some(MicroTime(
                now.checked_sub(SignedDuration::from_secs(renewed_secs_ago))
                    .unwrap(),
            )),
            ..LeaseSpec::default()
        }),
        ..Lease::default()
    }
}

#[test]
fn only_the_current_unexpired_holder_passes() {
    let now = Timestamp::now();
    assert_eq!(judge(Some(&lease("a", 2, 10)), "a", now), Ok(()));
    let other = judge(Some(&lease("b", 2, 10)), "a", now).unwrap_err();
    assert!(other.contains("\"b\" holds it"), "{other}");
    let expired = judge(Some(&lease("a", 11, 10)), "a", now).unwrap_err();
    assert!(expired.contains("expired"), "{expired}");
    let empty = judge(Some(&lease("", 1, 10)), "a", now).unwrap_err();
    assert!(empty.contains("nobody"), "{empty}");
    assert!(judge(None, "a", now)
        .unwrap_err()
        .contains("does not exist"));
}

#[test]
fn the_header_names_a_lease_and_a_holder() {
    let mut h = http::HeaderMap::new();
    assert_eq!(parse(&h).unwrap(), None);
    h.insert(HEADER, "flotilla-shard-3=proc-a".parse().unwrap());
    assert_eq!(
        parse(&h).unwrap(),
        Some(("flotilla-shard-3".into(), "proc-a".into()))
    );
    for bad in ["flotilla-shard-3", "=a", "x="] {
        h.insert(HEADER, bad.parse().unwrap());
        assert!(parse(&h).is_err(), "{bad} accepted");
    }
}

#[test]
fn leases_and_reads_are_never_fenced() {
    let read = RequestInfo::parse(&http::Method::GET, "/api/v1/namespaces/a/configmaps", false);
    assert!(!fenced_verb(&read));
    let lease = RequestInfo::parse(
        &http::Method::PUT,
        "/apis/coordination.k8s.io/v1/namespaces/flotilla-system/leases/flotilla-shard-1",
        false,
    );
    assert!(!fenced_verb(&lease));
    let write = RequestInfo::parse(
        &http::Method::POST,
        "/api/v1/namespaces/a/configmaps",
        false,
    );
    assert!(fenced_verb(&write));
}

#[test]
fn a_lease_is_parsed_once_per_version() {
    let key = "/registry/coordination.k8s.io/leases/flotilla-system/parsed-once";
    let version = |holder: &str, rev| {
        let raw = serde_json::to_vec(&lease(holder, 1, 10)).unwrap();
        Arc::new(CachedObject::new(key.into(), raw.into(), rev).unwrap())
    };
    let first = version("a", 1);
    let once = parsed(key, first.clone()).unwrap();
    let again = parsed(key, first).unwrap();
    assert!(
        Arc::ptr_eq(&once, &again),
        "the same version is not parsed again"
    );
    // A renewal or takeover is a new cached object: read anew.
    let taken = parsed(key, version("b", 2)).unwrap();
    let holder = |l: &Lease| l.spec.as_ref().and_then(|s| s.holder_identity.clone());
    assert_eq!(holder(&taken).as_deref(), Some("b"));
    assert_eq!(holder(&once).as_deref(), Some("a"));
}
