//! Delivery: Works land in every member and report back, the members describe themselves, and
//! a hub restart loses nothing.

use std::time::Duration;

use crate::common::fleet::{condition, eventually, kc};
use crate::common::Hub;
use flotilla_testkit::Members;

use super::demo_work;

/// The Work lands in every member and reports Available.
pub(super) fn works_land_and_report(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    for c in ["member-1", "member-2", "member-3"] {
        hub.ok_stdin(
            &["apply", "-f", "-"],
            &demo_work(&format!("flotilla-es-{c}"), true),
        );
    }
    for c in ["member-1", "member-2", "member-3"] {
        let es = format!("flotilla-es-{c}");
        eventually(
            hub,
            Duration::from_secs(60),
            &format!("Work in {c} Available"),
            || condition(hub, "work/demo", Some(&es), "Available") == "True",
        );
        assert_eq!(condition(hub, "work/demo", Some(&es), "Applied"), "True");
        let (ok, out, err) = kc(
            &m(c),
            &[
                "get",
                "deploy",
                "web",
                "-n",
                "demo",
                "-o",
                "jsonpath={.status.readyReplicas}",
            ],
        );
        assert!(ok && out == "2", "{c}: {out} {err}");
    }
    let feedback = hub.ok(&[
        "get", "work/demo", "-n", "flotilla-es-member-2", "-o",
        "jsonpath={.status.manifestStatuses[2].feedback.values[?(@.name==\"readyReplicas\")].value.integer}",
    ]);
    assert_eq!(feedback.trim(), "2");
}

/// What the members are: nodes, capacity, APIs (for placement).
pub(super) fn members_are_described(hub: &Hub) {
    let summary = hub.ok(&[
        "get", "cluster/member-1", "-o",
        "jsonpath={.status.nodeSummary.readyNum} {.status.resourceSummary.replicaEstimates[0].replicas} {.status.apiEnablements[*].groupVersion}",
    ]);
    let mut fields = summary.split_whitespace();
    let ready_nodes: i64 = fields.next().unwrap_or("0").parse().unwrap_or(0);
    let estimate: i64 = fields.next().unwrap_or("0").parse().unwrap_or(0);
    assert!(ready_nodes >= 1 && estimate > 0, "{summary}");
    assert!(summary.contains("apps/v1"), "{summary}");
}

/// A hub restart loses nothing: agents and push workers resume their watches, and a large
/// manifest (900 kB) written afterwards lands.
pub(super) fn hub_restart_loses_nothing(hub: &mut Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    hub.restart();
    let big = "x".repeat(900_000);
    hub.ok_stdin(
        &["create", "-f", "-"],
        &format!(
            r#"apiVersion: work.flotilla.io/v1alpha1
kind: Work
metadata: {{name: large, namespace: flotilla-es-member-2}}
spec:
  manifests:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {{name: large, namespace: demo}}
    data: {{blob: {big}}}
"#
        ),
    );
    eventually(
        hub,
        Duration::from_secs(60),
        "large Work applied after a hub restart",
        || condition(hub, "work/large", Some("flotilla-es-member-2"), "Applied") == "True",
    );
    let size = kc(
        &m("member-2"),
        &[
            "get",
            "cm",
            "large",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.blob}",
        ],
    )
    .1
    .len();
    assert_eq!(size, 900_000);
}
