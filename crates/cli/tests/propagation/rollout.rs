//! A progressive rollout over the three members (`ProgressivePerGroup`, groups [member-1] and
//! [member-2, member-3], `minSuccessTime: 10s`): a change reaches member-1 first and the others
//! only after member-1 has been healthy on it for 10 s; a change that never becomes ready on
//! member-1 (its pods fit no node, as a broken image would never start) fails the rollout past
//! `progressDeadline: 30s` with `maxFailures: 0`, members 2 and 3 keep the old revision; `undo`
//! restores member-1; a paused rollout holds until resumed.

use std::time::{Duration, Instant};

use crate::common::fleet::{eventually, flotilla, flotilla_ok};
use crate::common::Hub;
use flotilla_testkit::Members;

use super::{member_get, MEMBERS};

const POLICY: &str = r#"apiVersion: policy.flotilla.io/v1alpha1
kind: PropagationPolicy
metadata: {name: staged, namespace: demo}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: staged}
  placement:
    clusterAffinity: {clusterNames: [member-1, member-2, member-3]}
  rolloutStrategy:
    type: ProgressivePerGroup
    minSuccessTime: 10s
    progressDeadline: 30s
    maxFailures: 0
    groups:
    - {name: canary, clusterAffinity: {clusterNames: [member-1]}}
    - {name: rest, clusterAffinity: {clusterNames: [member-2, member-3]}}
"#;

/// The Deployment with `image`; `unschedulable` gives its pods a node selector no node has.
fn staged(image: &str, unschedulable: bool) -> String {
    let selector = if unschedulable {
        "\n      nodeSelector: {flotilla.test/none: \"true\"}"
    } else {
        ""
    };
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata: {{name: staged, namespace: demo, labels: {{app: staged}}}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: staged}}}}
  template:
    metadata: {{labels: {{app: staged}}}}
    spec:
      containers: [{{name: app, image: "{image}"}}]{selector}
"#
    )
}

const OBJECT: &str = "deployment/staged";

pub(super) fn progressive(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    let image = |c: &str| {
        member_get(
            &m(c),
            "deploy/staged",
            "{.spec.template.spec.containers[0].image}",
        )
    };
    let images = || MEMBERS.map(image);
    // `flotilla rollout status --watch`, for at most `timeout`.
    let watch = |timeout: &str| {
        flotilla(
            hub,
            &[
                "rollout",
                "status",
                OBJECT,
                "-n",
                "demo",
                "--watch",
                "--timeout",
                timeout,
            ],
        )
    };
    let condition = |type_: &str| {
        hub.ok(&[
            "get",
            "rb",
            "staged-deployment",
            "-n",
            "demo",
            "-o",
            &format!("jsonpath={{.status.rollout.conditions[?(@.type==\"{type_}\")].reason}}"),
        ])
        .trim()
        .to_owned()
    };

    // The first version rolls out the same way, and completes.
    hub.ok_stdin(&["apply", "-f", "-"], POLICY);
    hub.ok_stdin(&["apply", "-f", "-"], &staged("nginx:1.27", false));
    let out = watch("120s");
    assert!(
        out.status.success(),
        "the first rollout completes: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(images(), ["nginx:1.27"; 3]);

    // A change: member-1 first, the rest 10 s after member-1 is healthy on it.
    hub.ok_stdin(&["apply", "-f", "-"], &staged("nginx:1.28", false));
    eventually(
        hub,
        Duration::from_secs(30),
        "member-1 on the new image",
        || image("member-1") == "nginx:1.28",
    );
    let first = Instant::now();
    assert_eq!(
        image("member-2"),
        "nginx:1.27",
        "member-2 waits for member-1"
    );
    assert_eq!(
        image("member-3"),
        "nginx:1.27",
        "member-3 waits for member-1"
    );
    eventually(
        hub,
        Duration::from_secs(60),
        "member-2 on the new image",
        || image("member-2") == "nginx:1.28",
    );
    let waited = first.elapsed();
    assert!(
        waited >= Duration::from_millis(9_500),
        "member-2 got the change {waited:?} after member-1: it should wait for minSuccessTime (10s) of health"
    );
    let out = watch("60s");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "complete: {text}");
    assert!(
        text.contains("member-1") && text.contains("canary") && text.contains("Succeeded"),
        "{text}"
    );
    assert_eq!(images(), ["nginx:1.28"; 3]);

    // A change that never becomes ready on member-1: the rollout fails past the deadline and
    // goes no further.
    hub.ok_stdin(&["apply", "-f", "-"], &staged("nginx:1.29", true));
    eventually(
        hub,
        Duration::from_secs(30),
        "member-1 on the broken change",
        || image("member-1") == "nginx:1.29",
    );
    let out = watch("90s");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "a failed rollout exits non-zero: {text}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rollout failed"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("TimeOut"), "{text}");
    assert_eq!(condition("Failed"), "MaxFailuresExceeded");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(images(), ["nginx:1.29", "nginx:1.28", "nginx:1.28"]);
    let events = hub.ok(&[
        "get",
        "events",
        "-n",
        "demo",
        "--field-selector",
        "involvedObject.name=staged",
        "-o",
        "jsonpath={.items[*].reason}",
    ]);
    assert!(
        events.contains("RolloutFailed") && events.contains("RolloutStep"),
        "Events on the template: {events}"
    );

    // Undo: the template goes back to the previous revision, which rolls out; members 2 and 3
    // already run it.
    let said = flotilla_ok(hub, &["rollout", "undo", OBJECT, "-n", "demo"]);
    assert!(said.contains("set back to revision"), "{said}");
    let out = watch("90s");
    assert!(
        out.status.success(),
        "the undo completes: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(images(), ["nginx:1.28"; 3]);
    assert_eq!(
        member_get(
            &m("member-1"),
            "deploy/staged",
            "{.spec.template.spec.nodeSelector}"
        ),
        "",
        "the broken change is gone from member-1"
    );

    // Paused: a change goes nowhere until resumed.
    flotilla_ok(hub, &["rollout", "pause", OBJECT, "-n", "demo"]);
    hub.ok_stdin(&["apply", "-f", "-"], &staged("nginx:1.30", false));
    eventually(
        hub,
        Duration::from_secs(30),
        "the rollout says Paused",
        || condition("Progressing") == "Paused",
    );
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(images(), ["nginx:1.28"; 3], "paused: nothing moves");
    flotilla_ok(hub, &["rollout", "resume", OBJECT, "-n", "demo"]);
    eventually(
        hub,
        Duration::from_secs(30),
        "member-1 on the change once resumed",
        || image("member-1") == "nginx:1.30",
    );

    hub.ok(&["delete", "propagationpolicy", "staged", "-n", "demo"]);
    hub.ok(&["delete", "deployment", "staged", "-n", "demo"]);
    eventually(
        hub,
        Duration::from_secs(60),
        "staged gone from the members",
        || MEMBERS.iter().all(|c| image(c).is_empty()),
    );
}
