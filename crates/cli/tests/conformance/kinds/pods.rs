//! Pods: kube's defaults, status only through /status, the update rules, ephemeral
//! containers, binding and eviction, and no kubelet behind logs.

use serde_json::Value;

use super::{get, row};
use crate::common::Hub;

#[test]
fn a_pod_is_stored_with_kube_defaults_and_runs_nowhere() {
    let hub = Hub::start();
    // kubectl run sends the pod as protobuf.
    hub.ok(&["run", "web", "--image=nginx", "--labels=app=web"]);
    let pod = get(&hub, &["pod", "web"]);
    let spec = &pod["spec"];
    let c = &spec["containers"][0];
    assert_eq!(c["imagePullPolicy"], "Always", "{pod}");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    for (field, want) in [
        ("restartPolicy", Value::from("Always")),
        ("dnsPolicy", Value::from("ClusterFirst")),
        ("schedulerName", Value::from("default-scheduler")),
        ("terminationGracePeriodSeconds", Value::from(30)),
        ("enableServiceLinks", Value::from(true)),
        ("serviceAccountName", Value::from("default")),
        ("priority", Value::from(0)),
        ("preemptionPolicy", Value::from("PreemptLowerPriority")),
        ("securityContext", serde_json::json!({})),
    ] {
        assert_eq!(spec[field], want, "spec.{field} of {pod}");
    }
    assert_eq!(
        pod["status"],
        serde_json::json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
    assert_eq!(row(&hub, &["pod", "web"])[1..3], ["0/1", "Pending"]);

    // /status changes status (and metadata); the main resource does not.
    hub.ok(&[
        "patch",
        "pod",
        "web",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Running","podIP":"10.1.2.3","podIPs":[{"ip":"10.1.2.3"}]}}"#,
    ]);
    hub.ok(&[
        "patch",
        "pod",
        "web",
        "--type=merge",
        "-p",
        r#"{"status":{"phase":"Failed"}}"#,
    ]);
    let pod = get(&hub, &["pod", "web"]);
    assert_eq!(pod["status"]["phase"], "Running", "{pod}");
    assert_eq!(pod["spec"]["restartPolicy"], "Always");
    let wide = hub.ok(&["get", "pod", "web", "-o", "wide", "--no-headers"]);
    assert!(wide.contains("10.1.2.3"), "{wide}");

    // Only an image (among what kube allows) changes on an update.
    hub.ok(&["set", "image", "pod/web", "web=nginx:1.27"]);
    let err = hub.fails(&[
        "patch",
        "pod",
        "web",
        "--type=merge",
        "-p",
        r#"{"spec":{"restartPolicy":"Never"}}"#,
    ]);
    assert!(
        err.contains("pod updates may not change fields other than"),
        "{err}"
    );

    // ValidatePodSpec: a container needs an image.
    let imageless = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"bad"},
        "spec":{"containers":[{"name":"c"}]}}"#;
    let out = hub.kubectl_stdin(&["create", "-f", "-"], imageless);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("spec.containers[0].image: Required value"),
        "{err}"
    );

    // kubectl debug adds an ephemeral container through pods/ephemeralcontainers; the main
    // resource cannot change them.
    hub.ok(&["debug", "web", "--image=busybox", "--container=debugger"]);
    let pod = get(&hub, &["pod", "web"]);
    assert_eq!(
        pod["spec"]["ephemeralContainers"][0]["name"], "debugger",
        "{pod}"
    );
    let err = hub.fails(&[
        "patch",
        "pod",
        "web",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/ephemeralContainers"}]"#,
    ]);
    assert!(
        err.contains("pod updates may not change fields other than"),
        "{err}"
    );

    // No kubelet: logs and exec say so.
    let err = hub.fails(&["logs", "web"]);
    assert!(err.contains("does not have a host assigned"), "{err}");

    // binding assigns a node once; eviction deletes the pod.
    let binding = r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"web"},"target":{"kind":"Node","name":"n1"}}"#;
    let path = "/api/v1/namespaces/default/pods/web/binding";
    hub.ok_stdin(&["create", "--raw", path, "-f", "-"], binding);
    assert_eq!(get(&hub, &["pod", "web"])["spec"]["nodeName"], "n1");
    let out = hub.kubectl_stdin(&["create", "--raw", path, "-f", "-"], binding);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("already assigned"),
        "{err}"
    );
    let eviction = r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web","namespace":"default"}}"#;
    hub.ok_stdin(
        &[
            "create",
            "--raw",
            "/api/v1/namespaces/default/pods/web/eviction",
            "-f",
            "-",
        ],
        eviction,
    );
    let gone = hub.kubectl(&["get", "pod", "web"]);
    assert!(!gone.status.success(), "an evicted pod is deleted");
}

#[test]
fn eviction_honours_the_pods_disruption_budget() {
    let hub = Hub::start();
    let running =
        r#"{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}"#;
    for name in ["g1", "g2"] {
        hub.ok(&["run", name, "--image=nginx:1", "--labels=app=g"]);
        hub.ok(&[
            "patch",
            "pod",
            name,
            "--subresource=status",
            "--type=merge",
            "-p",
            running,
        ]);
    }
    hub.ok(&[
        "create",
        "pdb",
        "guard",
        "--selector=app=g",
        "--min-available=2",
    ]);
    let evict = |name: &str| {
        let body = format!(
            r#"{{"apiVersion":"policy/v1","kind":"Eviction","metadata":{{"name":"{name}"}}}}"#
        );
        let path = format!("/api/v1/namespaces/default/pods/{name}/eviction");
        hub.kubectl_stdin(&["create", "--raw", &path, "-f", "-"], &body)
    };
    // Once the budget is processed (2 healthy, 2 needed), no disruption is allowed: 429.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let pdb = get(&hub, &["pdb", "guard"]);
        if pdb["status"]["currentHealthy"] == 2 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "budget never processed: {pdb}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let out = evict("g1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("Cannot evict pod as it would violate the pod's disruption budget."),
        "{err}"
    );
    assert!(hub.kubectl(&["get", "pod", "g1"]).status.success());

    // With one pod to spare, the eviction goes through and uses the disruption up.
    hub.ok(&[
        "patch",
        "pdb",
        "guard",
        "--type=merge",
        "-p",
        r#"{"spec":{"minAvailable":1}}"#,
    ]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let out = evict("g1");
        if out.status.success() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "eviction still refused: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!hub.kubectl(&["get", "pod", "g1"]).status.success());
}
