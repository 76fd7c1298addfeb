use flotilla_apis::policy::v1alpha1::{ClusterAffinity, RolloutGroup};

use super::*;

const R1: &str = "web-deployment-r1";
const R2: &str = "web-deployment-r2";

fn t(secs: i64) -> Timestamp {
    Timestamp::from_second(1_800_000_000 + secs).unwrap()
}

fn per_group() -> RolloutStrategy {
    let group = |name: &str| RolloutGroup {
        name: name.into(),
        cluster_affinity: ClusterAffinity::default(),
    };
    RolloutStrategy {
        type_: RolloutType::ProgressivePerGroup,
        min_success_time: Some("10s".into()),
        progress_deadline: Some("30s".into()),
        groups: vec![group("canary"), group("rest")],
        ..RolloutStrategy::default()
    }
}

fn member(name: &str, group: Option<usize>, revision: Option<&str>, state: State) -> Member {
    Member {
        name: name.into(),
        group,
        revision: revision.map(str::to_owned),
        unmarked: false,
        state,
    }
}

fn pending() -> State {
    State::Pending("0 of 2 replicas available".into())
}

/// Three clusters of a fleet on `r1` everywhere, going to `r2`: `member-1` in group 0,
/// the others in group 1.
fn fleet(states: [(Option<&str>, State); 3]) -> Vec<Member> {
    let [a, b, c] = states;
    vec![
        member("member-1", Some(0), a.0, a.1),
        member("member-2", Some(1), b.0, b.1),
        member("member-3", Some(1), c.0, c.1),
    ]
}

fn step(
    strategy: &RolloutStrategy,
    members: &[Member],
    previous: Option<&RolloutStatus>,
    now: Timestamp,
) -> Plan {
    plan(&Input {
        strategy,
        paused: false,
        revision: R2,
        number: 2,
        members,
        previous,
        now,
    })
}

fn complete_on_r1() -> RolloutStatus {
    let mut conditions = Vec::new();
    conditions::set(
        &mut conditions,
        Set {
            type_: CONDITION_COMPLETE,
            status: "True",
            reason: "AllClustersUpdated",
            message: "",
        },
        t(-100),
    );
    RolloutStatus {
        revision: R1.into(),
        revision_number: 1,
        conditions,
        ..RolloutStatus::default()
    }
}

fn phases(p: &Plan) -> Vec<RolloutPhase> {
    p.status.clusters.iter().map(|c| c.phase).collect()
}

fn rendered(p: &Plan, cluster: &str) -> Render {
    p.render[cluster].clone()
}

#[test]
fn per_group_the_next_group_waits_until_the_first_is_healthy_for_min_success_time() {
    let s = per_group();
    let old = || (Some(R1), State::Healthy);
    // The template changed: only the first group is sent the new revision.
    let first = step(
        &s,
        &fleet([old(), old(), old()]),
        Some(&complete_on_r1()),
        t(0),
    );
    use RolloutPhase::*;
    assert_eq!(phases(&first), [Progressing, ToApply, ToApply]);
    assert_eq!(rendered(&first, "member-1"), Render::Revision(R2.into()));
    assert_eq!(rendered(&first, "member-2"), Render::Revision(R1.into()));
    assert_eq!(first.status.current_group.as_deref(), Some("canary"));
    assert_eq!(first.status.stable_revision.as_deref(), Some(R1));
    assert_eq!(first.wake, Some(t(30)), "woken at the progress deadline");
    assert_eq!(first.notes[0].reason, "RolloutStep");
    // Healthy at 5 s: it holds its group until 15 s.
    let members = fleet([(Some(R2), State::Healthy), old(), old()]);
    let healthy = step(&s, &members, Some(&first.status), t(5));
    assert_eq!(phases(&healthy), [Succeeded, ToApply, ToApply]);
    assert_eq!(healthy.wake, Some(t(15)));
    let early = step(&s, &members, Some(&healthy.status), t(14));
    assert_eq!(phases(&early), [Succeeded, ToApply, ToApply]);
    // At 15 s the second group goes, both its clusters at once.
    let next = step(&s, &members, Some(&early.status), t(15));
    assert_eq!(phases(&next), [Succeeded, Progressing, Progressing]);
    assert_eq!(next.status.current_group.as_deref(), Some("rest"));
    assert_eq!(rendered(&next, "member-3"), Render::Revision(R2.into()));
    // All healthy for 10 s: complete, and the revision is the stable one.
    let all = fleet([
        (Some(R2), State::Healthy),
        (Some(R2), State::Healthy),
        (Some(R2), State::Healthy),
    ]);
    let healthy = step(&s, &all, Some(&next.status), t(20));
    assert!(!conditions::is_true(
        &healthy.status.conditions,
        CONDITION_COMPLETE
    ));
    let done = step(&s, &all, Some(&healthy.status), t(30));
    assert!(conditions::is_true(
        &done.status.conditions,
        CONDITION_COMPLETE
    ));
    assert_eq!(done.status.stable_revision.as_deref(), Some(R2));
    assert!(done.notes.iter().any(|n| n.reason == "RolloutComplete"));
    assert_eq!(done.status.current_group, None);
}

#[test]
fn a_cluster_past_its_deadline_beyond_max_failures_stops_the_rollout() {
    let s = per_group();
    let old = || (Some(R1), State::Healthy);
    let first = step(
        &s,
        &fleet([old(), old(), old()]),
        Some(&complete_on_r1()),
        t(0),
    );
    let members = fleet([(Some(R2), pending()), old(), old()]);
    let waiting = step(&s, &members, Some(&first.status), t(29));
    use RolloutPhase::*;
    assert_eq!(phases(&waiting), [Progressing, ToApply, ToApply]);
    assert!(!conditions::is_true(
        &waiting.status.conditions,
        CONDITION_FAILED
    ));
    let stopped = step(&s, &members, Some(&waiting.status), t(30));
    assert_eq!(phases(&stopped), [TimeOut, ToApply, ToApply]);
    assert_eq!(stopped.status.failures, 1);
    assert!(conditions::is_true(
        &stopped.status.conditions,
        CONDITION_FAILED
    ));
    let progressing = conditions::find(&stopped.status.conditions, CONDITION_PROGRESSING).unwrap();
    assert_eq!(
        (progressing.status.as_str(), progressing.reason.as_str()),
        ("False", "RolloutFailed")
    );
    // The others keep the old revision, and stay there.
    assert_eq!(rendered(&stopped, "member-2"), Render::Revision(R1.into()));
    let later = step(&s, &members, Some(&stopped.status), t(300));
    assert_eq!(phases(&later), [TimeOut, ToApply, ToApply]);
    assert_eq!(rendered(&later, "member-1"), Render::Revision(R2.into()));
    assert!(stopped
        .notes
        .iter()
        .any(|n| n.reason == "RolloutFailed" && n.warning));
    assert!(
        !later.notes.iter().any(|n| n.reason == "RolloutFailed"),
        "said once"
    );
    // A degraded member fails at once; one failure allowed lets the rollout go on.
    let lenient = RolloutStrategy {
        max_failures: Some(IntOrString::Int(1)),
        ..per_group()
    };
    let members = fleet([(Some(R2), State::Failed("image pull".into())), old(), old()]);
    let on = step(&lenient, &members, Some(&first.status), t(1));
    assert_eq!(phases(&on), [Failed, Progressing, Progressing]);
}

#[test]
fn paused_takes_no_cluster_and_resumed_goes_on() {
    let s = per_group();
    let old = || (Some(R1), State::Healthy);
    let members = fleet([old(), old(), old()]);
    let paused = plan(&Input {
        strategy: &s,
        paused: true,
        revision: R2,
        number: 2,
        members: &members,
        previous: Some(&complete_on_r1()),
        now: t(0),
    });
    assert!(phases(&paused).iter().all(|p| *p == RolloutPhase::ToApply));
    let c = conditions::find(&paused.status.conditions, CONDITION_PROGRESSING).unwrap();
    assert_eq!(c.reason, "Paused");
    assert!(paused
        .render
        .values()
        .all(|r| *r == Render::Revision(R1.into())));
    let resumed = step(&s, &members, Some(&paused.status), t(1));
    assert_eq!(phases(&resumed)[0], RolloutPhase::Progressing);
}

#[test]
fn progressive_takes_groups_whole_then_the_rest_by_max_concurrency() {
    let s = RolloutStrategy {
        type_: RolloutType::Progressive,
        groups: vec![RolloutGroup {
            name: "canary".into(),
            cluster_affinity: ClusterAffinity::default(),
        }],
        ..RolloutStrategy::default()
    };
    let mut members: Vec<Member> = (1..=8)
        .map(|i| member(&format!("m-{i}"), None, Some(R1), State::Healthy))
        .collect();
    members[0].group = Some(0);
    members[1].group = Some(0);
    let first = step(&s, &members, Some(&complete_on_r1()), t(0));
    let sent: Vec<&str> = first
        .status
        .clusters
        .iter()
        .filter(|c| c.phase == RolloutPhase::Progressing)
        .map(|c| c.name.as_str())
        .collect();
    assert_eq!(sent, ["m-1", "m-2"]);
    for m in &mut members[..2] {
        m.revision = Some(R2.into());
    }
    let rest = step(&s, &members, Some(&first.status), t(1));
    let sent = rest
        .status
        .clusters
        .iter()
        .filter(|c| c.phase == RolloutPhase::Progressing)
        .count();
    // 25% of 8 clusters at a time once the group is done (no minSuccessTime).
    assert_eq!(sent, 2);
}

#[test]
fn a_new_cluster_gets_the_stable_revision_and_an_unmarked_work_is_kept() {
    let s = per_group();
    let mut members = fleet([
        (Some(R1), State::Healthy),
        (Some(R1), State::Healthy),
        (None, pending()),
    ]);
    members[2].group = None;
    let p = step(&s, &members, Some(&complete_on_r1()), t(0));
    // member-3 joined: no Work yet, and its group's turn has not come.
    assert_eq!(rendered(&p, "member-3"), Render::Revision(R1.into()));
    // Before any rollout (held, so none starts): an unmarked Work stays, none is written.
    let first_ever = |members: &[Member]| {
        plan(&Input {
            strategy: &s,
            paused: true,
            revision: R2,
            number: 1,
            members,
            previous: None,
            now: t(0),
        })
    };
    members[2].unmarked = true;
    assert_eq!(
        rendered(&first_ever(&members[2..]), "member-3"),
        Render::Keep
    );
    members[2].unmarked = false;
    let first_ever = first_ever(&members[2..]);
    assert_eq!(rendered(&first_ever, "member-3"), Render::Nothing);
}

#[test]
fn percentages_of_the_fleet() {
    let pct = |s: &str| IntOrString::String(s.into());
    assert_eq!(scaled(&pct("25%"), 10, true), Some(3));
    assert_eq!(scaled(&pct("25%"), 10, false), Some(2));
    assert_eq!(scaled(&IntOrString::Int(4), 10, true), Some(4));
    assert_eq!(scaled(&pct("x%"), 10, true), None);
}
