//! PriorityClasses: the system ones, kube's validation and the Priority admission plugin.

use std::time::{Duration, Instant};

use serde_json::Value;

use super::{get, row};
use crate::common::Hub;

#[test]
fn priority_classes_are_judged_as_kube_apiserver_judges_them() {
    let hub = Hub::start();
    let deadline = Instant::now() + Duration::from_secs(10);
    while hub
        .kubectl(&["get", "pc", "system-node-critical"])
        .status
        .code()
        != Some(0)
    {
        assert!(Instant::now() < deadline, "no system priority classes");
        std::thread::sleep(Duration::from_millis(100));
    }
    let node_critical = get(&hub, &["pc", "system-node-critical"]);
    assert_eq!(node_critical["value"], 2_000_001_000);
    assert_eq!(node_critical["preemptionPolicy"], "PreemptLowerPriority");
    let err = hub.fails(&["delete", "pc", "system-cluster-critical"]);
    assert!(
        err.contains("this is a system priority class and cannot be deleted"),
        "{err}"
    );

    // OpenAPI v3 has the group (kubectl explain reads it).
    let explained = hub.ok(&["explain", "priorityclass.preemptionPolicy"]);
    assert!(explained.contains("PreemptLowerPriority"), "{explained}");
    let v3 = hub.ok(&["get", "--raw", "/openapi/v3"]);
    for gv in [
        "apis/scheduling.k8s.io/v1",
        "apis/storage.k8s.io/v1",
        "apis/certificates.k8s.io/v1",
    ] {
        assert!(v3.contains(&format!("\"{gv}\"")), "{gv} missing from {v3}");
    }

    // kubectl create priorityclass sends protobuf.
    hub.ok(&[
        "create",
        "priorityclass",
        "high",
        "--value=1000",
        "--description=d",
    ]);
    assert_eq!(row(&hub, &["pc", "high"])[1..3], ["1000", "false"]);
    let err = hub.fails(&[
        "patch",
        "pc",
        "high",
        "--type=merge",
        "-p",
        r#"{"value":10000}"#,
    ]);
    assert!(
        err.contains("value: Forbidden: may not be changed in an update."),
        "{err}"
    );
    hub.ok(&[
        "patch",
        "pc",
        "high",
        "--type=merge",
        "-p",
        r#"{"description":"updated"}"#,
    ]);
    let err = hub.fails(&["create", "priorityclass", "system-mine", "--value=1"]);
    assert!(err.contains("reserved for system use only"), "{err}");

    hub.ok(&[
        "create",
        "priorityclass",
        "fallback",
        "--value=7",
        "--global-default",
    ]);
    let err = hub.fails(&[
        "create",
        "priorityclass",
        "other",
        "--value=8",
        "--global-default",
    ]);
    assert!(
        err.contains(
            "PriorityClass fallback is already marked as default. Only one default can exist"
        ),
        "{err}"
    );

    // Pods take their priority from their class, or the global default one.
    hub.ok(&["run", "plain", "--image=nginx:1"]);
    let plain = get(&hub, &["pod", "plain"]);
    assert_eq!(
        (
            &plain["spec"]["priorityClassName"],
            &plain["spec"]["priority"]
        ),
        (&Value::from("fallback"), &Value::from(7))
    );
    let pod = |name: &str, class: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{name}"}},
                "spec":{{"priorityClassName":"{class}","containers":[{{"name":"c","image":"nginx:1"}}]}}}}"#
        )
    };
    hub.ok_stdin(&["create", "-f", "-"], &pod("urgent", "high"));
    assert_eq!(get(&hub, &["pod", "urgent"])["spec"]["priority"], 1000);
    let out = hub.kubectl_stdin(&["create", "-f", "-"], &pod("lost", "nope"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("pods \"lost\" is forbidden: no PriorityClass with name nope was found"),
        "{err}"
    );
}
