//! What a beat would write, compared with what was written before: the decision not to read
//! the Cluster rests on it.

use super::*;

fn api(gv: &str) -> ApiEnablement {
    ApiEnablement {
        group_version: gv.into(),
        ..ApiEnablement::default()
    }
}

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
    assert!(unchanged(&written, &k, &Ok(())));
}

#[test]
fn a_beat_compares_without_copying_the_apis_and_still_sees_every_change() {
    let mut k = known("v1.32.2");
    k.apis = Some((Instant::now(), vec![api("v1"), api("apps/v1")]));
    let written = next_status(&ClusterStatus::default(), &k, &Ok(()));
    assert_eq!(written.api_enablements.len(), 2);
    assert!(unchanged(&written, &k, &Ok(())));
    // Not discovered again this beat: the APIs written stand.
    let mut not_rediscovered = known("v1.32.2");
    not_rediscovered.apis = None;
    assert!(unchanged(&written, &not_rediscovered, &Ok(())));
    // An API more, a new version, or the member gone: each is a change, as `same` says.
    k.apis = Some((
        Instant::now(),
        vec![api("v1"), api("apps/v1"), api("batch/v1")],
    ));
    assert!(!unchanged(&written, &k, &Ok(())));
    assert!(!same(&next_status(&written, &k, &Ok(())), &written));
    let newer = Known {
        version: Some("v1.33.0".into()),
        ..Known::default()
    };
    assert!(!unchanged(&written, &newer, &Ok(())));
    let down = Err("the member's API server is unreachable".to_owned());
    assert!(!unchanged(&written, &not_rediscovered, &down));
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

#[test]
fn the_apis_travel_in_the_patch_only_when_they_changed() {
    let mut k = known("v1.32.2");
    k.apis = Some((Instant::now(), vec![api("v1"), api("apps/v1")]));
    let previous = next_status(&ClusterStatus::default(), &k, &Ok(()));
    let mut refreshed = next_status(&previous, &k, &Ok(()));
    refreshed.last_heartbeat_time = Some(Time(Timestamp::now()));
    let patch = changed(&refreshed, &previous);
    assert!(patch.get("apiEnablements").is_none(), "{patch}");
    assert!(patch.get("lastHeartbeatTime").is_some(), "{patch}");
    assert_eq!(patch["kubernetesVersion"], "v1.32.2");
    // A member that serves one API more sends the whole new list (a merge patch replaces it).
    k.apis = Some((
        Instant::now(),
        vec![api("v1"), api("apps/v1"), api("batch/v1")],
    ));
    let grown = next_status(&previous, &k, &Ok(()));
    assert_eq!(
        changed(&grown, &previous)["apiEnablements"]
            .as_array()
            .map(Vec::len),
        Some(3)
    );
}

#[test]
fn beats_start_on_the_grid_so_a_process_renews_its_leases_together() {
    let epoch = tokio::time::Instant::now();
    let at = |ms: u64| epoch + Duration::from_millis(ms);
    assert_eq!(on_grid(at(0), epoch), at(0));
    assert_eq!(on_grid(at(1), epoch), at(250));
    assert_eq!(on_grid(at(250), epoch), at(250));
    assert_eq!(on_grid(at(9_999), epoch), at(10_000));
    // Before the epoch (cannot happen: it is taken first): the epoch itself.
    assert_eq!(on_grid(epoch, at(5)), at(5));
}
