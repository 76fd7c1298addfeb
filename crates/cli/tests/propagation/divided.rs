//! Replicas divided by static weights: 1:1:1 gives 2/2/2 with the status summed on the hub,
//! and a policy change re-divides them (also when a placement is applied again).

use std::time::Duration;

use crate::common::fleet::{eventually, flotilla_ok};
use crate::common::Hub;
use flotilla_testkit::Members;

use super::{deployment, member_replicas, weighted_policy, MEMBERS};

/// Divided 1:1:1: 2/2/2, and the hub sums the members' status.
pub(super) fn divided_evenly(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    hub.ok(&["create", "namespace", "demo"]);
    hub.ok_stdin(&["apply", "-f", "-"], &deployment("web", 6, ""));
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &weighted_policy(&[("member-1", 1), ("member-2", 1), ("member-3", 1)]),
    );
    eventually(
        hub,
        Duration::from_secs(60),
        "web 2/2/2 in the members",
        || MEMBERS.iter().all(|c| member_replicas(&m(c), "web") == "2"),
    );
    let binding = hub.ok(&[
        "get",
        "rb",
        "web-deployment",
        "-n",
        "demo",
        "-o",
        "jsonpath={.spec.clusters[*].name}:{.spec.clusters[*].replicas}",
    ]);
    assert_eq!(binding.trim(), "member-1 member-2 member-3:2 2 2");
    eventually(
        hub,
        Duration::from_secs(90),
        "the hub shows 6 ready replicas",
        || {
            let out = hub.kubectl(&[
                "get",
                "deploy",
                "web",
                "-n",
                "demo",
                "-o",
                "jsonpath={.status.readyReplicas}",
            ]);
            String::from_utf8_lossy(&out.stdout).trim() == "6"
        },
    );
    hub.ok(&[
        "rollout",
        "status",
        "deployment/web",
        "-n",
        "demo",
        "--timeout=60s",
    ]);
    eventually(
        hub,
        Duration::from_secs(30),
        "the binding is FullyApplied",
        || {
            let out = hub.kubectl(&["get", "rb", "web-deployment", "-n", "demo", "-o",
            "jsonpath={.status.conditions[?(@.type==\"FullyApplied\")].status}/{.status.conditions[?(@.type==\"Scheduled\")].status}"]);
            String::from_utf8_lossy(&out.stdout).trim() == "True/True"
        },
    );
    let explain = flotilla_ok(hub, &["explain", "placement", "deploy/web", "-n", "demo"]);
    assert!(
        explain.contains("member-1") && explain.contains("selected"),
        "{explain}"
    );
    // ...and which controller process works the binding: the hub's, holding its shard.
    assert!(
        explain.contains("worked in shard") && explain.contains("held by controller process"),
        "{explain}"
    );
}

/// Weights 2:1 on two clusters: 4/2, and member-3's copy leaves; applying the placements
/// again (A → B → A → B) divides the replicas afresh each time.
pub(super) fn reweighted(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &weighted_policy(&[("member-1", 2), ("member-2", 1)]),
    );
    eventually(
        hub,
        Duration::from_secs(60),
        "web 4/2/- after the policy change",
        || {
            member_replicas(&m("member-1"), "web") == "4"
                && member_replicas(&m("member-2"), "web") == "2"
                && member_replicas(&m("member-3"), "web").is_empty()
        },
    );
    // A placement applied again after another one (A → B → A → B) takes effect each time: the
    // replicas are divided afresh, not kept where the previous placement put them.
    for (weights, want, what) in [
        (
            &[("member-1", 1), ("member-2", 1), ("member-3", 1)][..],
            ["2", "2", "2"],
            "web 2/2/2 again after the policy is changed back",
        ),
        (
            &[("member-1", 2), ("member-2", 1)][..],
            ["4", "2", ""],
            "web 4/2/- again",
        ),
    ] {
        hub.ok_stdin(&["apply", "-f", "-"], &weighted_policy(weights));
        eventually(hub, Duration::from_secs(60), what, || {
            MEMBERS
                .iter()
                .zip(want)
                .all(|(c, n)| member_replicas(&m(c), "web") == n)
        });
    }
}
