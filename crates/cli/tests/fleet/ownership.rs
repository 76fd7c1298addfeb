//! What flotilla owns in a member: drift is undone, removed manifests leave, an object it did
//! not create is not overwritten, and deleting a Work removes what it applied.

use std::time::Duration;

use crate::common::fleet::{condition, eventually, kc};
use crate::common::Hub;
use flotilla_testkit::Members;

use super::demo_work;

/// Drift: a managed field changed in the member is put back; unmanaged fields stay.
pub(super) fn drift_is_undone(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    let m1 = m("member-1");
    kc(
        &m1,
        &[
            "patch",
            "configmap",
            "settings",
            "-n",
            "demo",
            "--type",
            "merge",
            "-p",
            r#"{"data":{"color":"red"}}"#,
        ],
    );
    eventually(hub, Duration::from_secs(15), "drift corrected", || {
        kc(
            &m1,
            &[
                "get",
                "cm",
                "settings",
                "-n",
                "demo",
                "-o",
                "jsonpath={.data.color}",
            ],
        )
        .1 == "blue"
    });
    // `replicas` of `autoscaled` is not in the manifest, so an HPA (here: kubectl scale) owns it.
    let (ok, _, err) = kc(
        &m1,
        &[
            "scale",
            "deploy",
            "autoscaled",
            "-n",
            "demo",
            "--replicas",
            "3",
        ],
    );
    assert!(ok, "{err}");
    std::thread::sleep(Duration::from_secs(5));
    let replicas = kc(
        &m1,
        &[
            "get",
            "deploy",
            "autoscaled",
            "-n",
            "demo",
            "-o",
            "jsonpath={.spec.replicas}",
        ],
    )
    .1;
    assert_eq!(
        replicas, "3",
        "flotilla fought the autoscaler over replicas"
    );
}

/// A manifest removed from the Work leaves the member.
pub(super) fn removed_manifest_leaves(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    let m1 = m("member-1");
    hub.ok_stdin(
        &["apply", "-f", "-"],
        &demo_work("flotilla-es-member-1", false),
    );
    eventually(
        hub,
        Duration::from_secs(15),
        "removed manifest pruned",
        || {
            let (ok, _, err) = kc(&m1, &["get", "cm", "settings", "-n", "demo"]);
            !ok && err.contains("NotFound")
        },
    );
}

/// Abort: an object flotilla did not create is not overwritten.
pub(super) fn conflict_is_not_overwritten(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    let m2 = m("member-2");
    let (ok, _, err) = kc(
        &m2,
        &[
            "create",
            "configmap",
            "taken",
            "-n",
            "demo",
            "--from-literal=owner=someone",
        ],
    );
    assert!(ok, "{err}");
    hub.ok_stdin(
        &["apply", "-f", "-"],
        r#"apiVersion: work.flotilla.io/v1alpha1
kind: Work
metadata: {name: clash, namespace: flotilla-es-member-2}
spec:
  manifests:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: taken, namespace: demo}
    data: {owner: flotilla}
"#,
    );
    eventually(hub, Duration::from_secs(20), "conflict reported", || {
        let out = hub.kubectl(&[
            "get",
            "work/clash",
            "-n",
            "flotilla-es-member-2",
            "-o",
            "jsonpath={.status.manifestStatuses[0].conditions[?(@.type==\"Applied\")].reason}",
        ]);
        String::from_utf8_lossy(&out.stdout).trim() == "Conflict"
    });
    assert_eq!(
        condition(hub, "work/clash", Some("flotilla-es-member-2"), "Applied"),
        "False"
    );
    let data = kc(
        &m2,
        &[
            "get",
            "cm",
            "taken",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.owner}",
        ],
    )
    .1;
    assert_eq!(data, "someone");
}

/// Deleting a Work (push member) removes what it applied.
pub(super) fn deleting_a_work_removes_what_it_applied(hub: &Hub, members: &Members) {
    let m = |name: &str| members.member(name).expect("member").kubeconfig.clone();
    hub.ok(&[
        "delete",
        "work/demo",
        "-n",
        "flotilla-es-member-3",
        "--wait=true",
        "--timeout=30s",
    ]);
    let (ok, _, err) = kc(&m("member-3"), &["get", "deploy", "web", "-n", "demo"]);
    assert!(!ok && err.contains("NotFound"), "{err}");
}
