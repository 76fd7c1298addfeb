//! What a beat would write, compared with what was written before: the decision not to read
//! the Cluster rests on it.

use super::*;

fn known(version: &str) -> Known {
    Known {
        version: Some(version.into()),
        ..Known::default()
    }
}

#[test]
fn a_beat_that_finds_the_same_member_writes_nothing_new() {
    let k = known("v1.32.2");
    let first = next_status(&ClusterStatus::default(), &k, &Ok(()));
    let ready = conditions::find(&first.conditions, CONDITION_READY).expect("Ready");
    assert_eq!(ready.status, "True");
    assert_eq!(first.kubernetes_version.as_deref(), Some("v1.32.2"));
    let mut written = first.clone();
    written.last_heartbeat_time = Some(Time(Timestamp::now()));
    // The next beat's status is the same but for the heartbeat time.
    assert!(same(&next_status(&written, &k, &Ok(())), &written));
}

#[test]
fn an_unreachable_member_or_a_new_version_is_a_change() {
    let k = known("v1.32.2");
    let written = next_status(&ClusterStatus::default(), &k, &Ok(()));
    let down = next_status(
        &written,
        &k,
        &Err("the member's API server is unreachable".into()),
    );
    assert!(!same(&down, &written));
    let ready = conditions::find(&down.conditions, CONDITION_READY).expect("Ready");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", REASON_MEMBER_UNREACHABLE)
    );
    assert!(!same(
        &next_status(&written, &known("v1.33.0"), &Ok(())),
        &written
    ));
}

#[test]
fn conditions_others_set_are_kept() {
    let k = known("v1.32.2");
    let mut approved = ClusterStatus::default();
    conditions::set(
        &mut approved.conditions,
        Set {
            type_: "Approved",
            status: "True",
            reason: "Approved",
            message: "approved by admin",
        },
        Timestamp::now(),
    );
    let next = next_status(&approved, &k, &Ok(()));
    assert!(conditions::find(&next.conditions, "Approved").is_some());
}
