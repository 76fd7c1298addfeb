//! End to end on three real member clusters: two join in pull mode (agents asking with bootstrap
//! credentials, approved on the hub), one in push mode; Works land in each and report back;
//! drift is undone; removed manifests leave the member; a pre-existing object is not
//! overwritten; health follows stopped members and agents; credentials reach only what they
//! should; removal revokes an agent at once.
#[path = "../common/mod.rs"]
mod common;

mod agent;
mod delivery;
mod health;
mod joining;
mod ownership;

use std::process::Command;
use std::time::Duration;

use agent::Agent;
use common::fleet::{condition, eventually, flotilla, flotilla_ok};
use common::Hub;
use flotilla_testkit::Members;

fn demo_work(es: &str, with_configmap: bool) -> String {
    let cm = if with_configmap {
        r#"
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: settings, namespace: demo}
    data: {color: blue}"#
    } else {
        ""
    };
    format!(
        r#"apiVersion: work.flotilla.io/v1alpha1
kind: Work
metadata: {{name: demo, namespace: {es}}}
spec:
  manifests:
  - apiVersion: v1
    kind: Namespace
    metadata: {{name: demo}}{cm}
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: web, namespace: demo}}
    spec:
      replicas: 2
      selector: {{matchLabels: {{app: web}}}}
      template:
        metadata: {{labels: {{app: web}}}}
        spec:
          containers: [{{name: web, image: nginx}}]
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {{name: autoscaled, namespace: demo}}
    spec:
      selector: {{matchLabels: {{app: autoscaled}}}}
      template:
        metadata: {{labels: {{app: autoscaled}}}}
        spec:
          containers: [{{name: app, image: nginx}}]
"#
    )
}

#[test]
fn three_members_join_receive_work_and_stay_healthy() {
    let members = Members::shared(3).expect("member clusters (scripts/members build)");
    let mut hub = Hub::start_with(&["--cluster-grace-period", "8s", "--heartbeat-interval", "2s"]);

    let (agent1, _agent2) = joining::join_two_pull_one_push(&hub, members);
    let own = agent1.state.join("hub.kubeconfig");
    joining::agent_reaches_own_namespace_only(&own);
    delivery::works_land_and_report(&hub, members);
    delivery::members_are_described(&hub);
    delivery::hub_restart_loses_nothing(&mut hub, members);
    ownership::drift_is_undone(&hub, members);
    ownership::removed_manifest_leaves(&hub, members);
    ownership::conflict_is_not_overwritten(&hub, members);
    ownership::deleting_a_work_removes_what_it_applied(&hub, members);
    health::stopped_member_turns_not_ready(&hub, members);
    let agent1 = health::silent_agent_turns_unknown(&hub, members, agent1);
    health::removal_revokes_the_agent(&hub, members, agent1, &own);
}

#[test]
fn a_denied_join_request_ends_the_agent_with_one_clear_line() {
    let members = Members::shared(3).expect("member clusters (scripts/members build)");
    let member = members
        .member("member-1")
        .expect("member")
        .kubeconfig
        .clone();
    let hub = Hub::start();
    let boot = hub.dir.path().join("boot.kubeconfig");
    flotilla_ok(&hub, &["token", "create", "-o", boot.to_str().unwrap()]);
    let mut agent = Agent::start(&hub, "intruder", &member, Some(&boot));
    eventually(&hub, Duration::from_secs(30), "join request", || {
        condition(&hub, "cluster/intruder", None, "Joined") == "False"
    });
    flotilla_ok(&hub, &["cluster", "remove", "intruder"]);
    let status = agent.wait_exit(Duration::from_secs(20));
    assert!(!status.success());
    let log = agent.log();
    assert!(
        log.lines()
            .any(|l| l.starts_with("Error: ") && l.contains("denied")),
        "no one-line reason in the agent's output:\n{log}"
    );
    // An agent without credential or bootstrap kubeconfig says what to pass.
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["agent", "--cluster", "x", "--state-dir"])
        .arg(hub.dir.path().join("empty"))
        .arg("--kubeconfig")
        .arg(&member)
        .output()
        .expect("agent");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--bootstrap-kubeconfig"), "{err}");
    // An expired bootstrap credential is refused in one line.
    let expired = hub.dir.path().join("expired.kubeconfig");
    let zero = flotilla(&hub, &["token", "create", "--ttl", "0s"]);
    assert!(!zero.status.success());
    assert!(String::from_utf8_lossy(&zero.stderr).contains("--ttl must be more than 0"));
    let path = expired.to_str().unwrap();
    flotilla_ok(&hub, &["token", "create", "--ttl", "1s", "-o", path]);
    std::thread::sleep(Duration::from_millis(1500));
    let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .args(["agent", "--cluster", "late", "--state-dir"])
        .arg(hub.dir.path().join("late"))
        .arg("--kubeconfig")
        .arg(&member)
        .arg("--bootstrap-kubeconfig")
        .arg(&expired)
        .output()
        .expect("agent");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("flotilla token create"), "{err}");
}
