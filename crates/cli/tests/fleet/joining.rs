//! Joining: pull agents ask with bootstrap credentials and are approved, a push member is
//! joined by the admin, and what each credential may read.

use std::path::Path;
use std::time::Duration;

use crate::common::fleet::{condition, eventually, flotilla_ok, kc};
use crate::common::Hub;
use flotilla_testkit::Members;

use super::agent::Agent;

/// Joining: two pull agents ask, the admin approves; one member joins by push. The agents
/// are returned (killed when dropped).
pub(super) fn join_two_pull_one_push(hub: &Hub, members: &Members) -> (Agent, Agent) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    let boot1 = hub.dir.path().join("boot-1.kubeconfig");
    let boot2 = hub.dir.path().join("boot-2.kubeconfig");
    flotilla_ok(
        hub,
        &[
            "token",
            "create",
            "--cluster",
            "member-1",
            "-o",
            boot1.to_str().unwrap(),
        ],
    );
    flotilla_ok(hub, &["token", "create", "-o", boot2.to_str().unwrap()]);
    // The bootstrap credential reads nothing.
    for args in [
        &["get", "namespaces"][..],
        &["get", "works", "-A"],
        &["get", "secrets", "-n", "flotilla-system"],
        &["get", "clusters"],
    ] {
        let (ok, _, err) = kc(&boot1, args);
        assert!(
            !ok && err.contains("forbidden"),
            "bootstrap {args:?}: {err}"
        );
    }
    let agent1 = Agent::start(hub, "member-1", &m("member-1"), Some(&boot1));
    let agent2 = Agent::start(hub, "member-2", &m("member-2"), Some(&boot2));
    eventually(
        hub,
        Duration::from_secs(30),
        "member-1 pending approval",
        || {
            let out = hub.kubectl(&[
                "get",
                "cluster/member-1",
                "-o",
                "jsonpath={.status.conditions[?(@.type==\"Joined\")].reason}",
            ]);
            String::from_utf8_lossy(&out.stdout).trim() == "PendingApproval"
        },
    );
    assert_eq!(condition(hub, "cluster/member-1", None, "Joined"), "False");
    flotilla_ok(hub, &["cluster", "approve", "member-1"]);
    flotilla_ok(hub, &["cluster", "approve", "member-2"]);
    let joined = flotilla_ok(
        hub,
        &[
            "join",
            "member-3",
            "--member-kubeconfig",
            m("member-3").to_str().unwrap(),
            "--labels",
            "tier=edge",
            "--region",
            "ap",
        ],
    );
    assert!(joined.contains("Push"), "{joined}");
    for c in ["member-1", "member-2", "member-3"] {
        eventually(hub, Duration::from_secs(60), &format!("{c} Ready"), || {
            condition(hub, &format!("cluster/{c}"), None, "Ready") == "True"
        });
    }
    let table = hub.ok(&["get", "clusters"]);
    assert!(
        table.contains("Push") && table.contains("v1.32.2"),
        "{table}"
    );
    // No member credential for pull clusters on the hub; the push one is in a Secret.
    let secrets = hub.ok(&["get", "secrets", "-n", "flotilla-system", "-o", "name"]);
    assert!(secrets.contains("cluster-member-3-kubeconfig"), "{secrets}");
    assert!(!secrets.contains("member-1-kubeconfig"), "{secrets}");
    (agent1, agent2)
}

/// Credentials: an agent reaches its own namespace only.
pub(super) fn agent_reaches_own_namespace_only(own: &Path) {
    let (ok, _, err) = kc(own, &["get", "works", "-n", "flotilla-es-member-1"]);
    assert!(ok, "own works: {err}");
    for args in [
        &["get", "works", "-n", "flotilla-es-member-2"][..],
        &["get", "secrets", "-n", "flotilla-system"],
        &["get", "cluster", "member-2"],
        &["get", "configmaps", "-n", "default"],
    ] {
        let (ok, _, err) = kc(own, args);
        assert!(!ok && err.contains("forbidden"), "agent {args:?}: {err}");
    }
}
