//! Health: a stopped member and a silent agent are seen and tainted, and removal revokes an
//! agent at once.

use std::path::Path;
use std::time::Duration;

use crate::common::fleet::{condition, eventually, flotilla_ok, kc};
use crate::common::Hub;
use flotilla_testkit::Members;

use super::agent::Agent;

/// The keys of a cluster's taints, space-separated.
fn taints(hub: &Hub, cluster: &str) -> String {
    let out = hub.kubectl(&[
        "get",
        &format!("cluster/{cluster}"),
        "-o",
        "jsonpath={.spec.taints[*].key}",
    ]);
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A stopped member turns NotReady and tainted, and Ready again when it starts.
pub(super) fn stopped_member_turns_not_ready(hub: &Hub, members: &Members) {
    members.stop("member-2").expect("stop member-2");
    eventually(hub, Duration::from_secs(30), "member-2 not ready", || {
        condition(hub, "cluster/member-2", None, "Ready") == "False"
    });
    eventually(hub, Duration::from_secs(10), "member-2 tainted", || {
        taints(hub, "member-2").contains("cluster.flotilla.io/not-ready")
    });
    members.start("member-2").expect("start member-2");
    eventually(hub, Duration::from_secs(60), "member-2 ready again", || {
        condition(hub, "cluster/member-2", None, "Ready") == "True"
            && taints(hub, "member-2").is_empty()
    });
}

/// A silent agent: Unknown and unreachable after the grace period; back when it returns.
pub(super) fn silent_agent_turns_unknown(hub: &Hub, members: &Members, mut agent1: Agent) -> Agent {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    let m1 = m("member-1");
    drop(agent1);
    eventually(hub, Duration::from_secs(30), "member-1 unknown", || {
        condition(hub, "cluster/member-1", None, "Ready") == "Unknown"
            && taints(hub, "member-1").contains("cluster.flotilla.io/unreachable")
    });
    // Restarted without a bootstrap credential: it still holds its own.
    agent1 = Agent::start(hub, "member-1", &m1, None);
    eventually(hub, Duration::from_secs(30), "member-1 back", || {
        condition(hub, "cluster/member-1", None, "Ready") == "True"
            && taints(hub, "member-1").is_empty()
    });
    agent1
}

/// Removal revokes the agent at once; it says so and exits non-zero.
pub(super) fn removal_revokes_the_agent(
    hub: &Hub,
    members: &Members,
    mut agent1: Agent,
    own: &Path,
) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    let m1 = m("member-1");
    flotilla_ok(hub, &["cluster", "remove", "member-1"]);
    let status = agent1.wait_exit(Duration::from_secs(30));
    assert!(!status.success());
    let log = agent1.log();
    assert!(
        log.lines()
            .any(|l| l.starts_with("Error: ") && l.contains("credential")),
        "no one-line reason in the agent's output:\n{log}"
    );
    let (ok, _, err) = kc(own, &["get", "works", "-n", "flotilla-es-member-1"]);
    assert!(
        !ok && (err.contains("Unauthorized") || err.contains("must be logged in")),
        "{err}"
    );
    // The member keeps what it runs.
    let (ok, _, err) = kc(&m1, &["get", "deploy", "web", "-n", "demo"]);
    assert!(ok, "{err}");
}
