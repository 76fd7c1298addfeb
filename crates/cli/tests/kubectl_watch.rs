//! Watches through kubectl: `get -w` sees changes as they happen, `wait` returns on a condition,
//! and finalizers hold a deletion until they are removed.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::Hub;

#[test]
fn get_watch_streams_changes() {
    let hub = Hub::start();
    hub.ok(&["create", "namespace", "w"]);
    let mut child = Command::new("kubectl")
        .args(["--kubeconfig"])
        .arg(&hub.kubeconfig)
        .args([
            "get",
            "cm",
            "-n",
            "w",
            "-w",
            "-o",
            "name",
            "--request-timeout=0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("kubectl get -w");
    std::thread::sleep(Duration::from_secs(1));
    for i in 0..3 {
        hub.ok_stdin(&["create", "-f", "-"], &format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"w{i}","namespace":"w"}}}}"#));
    }
    std::thread::sleep(Duration::from_secs(2));
    let _ = child.kill();
    let _ = child.wait();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    for i in 0..3 {
        assert!(
            out.contains(&format!("configmap/w{i}")),
            "watch missed w{i}: {out}"
        );
    }
}

#[test]
fn finalizers_hold_deletion_until_removed() {
    let hub = Hub::start();
    hub.ok_stdin(&["create", "-f", "-"], r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"held","namespace":"default","finalizers":["example.com/hold"]}}"#);
    hub.ok(&["delete", "cm", "held", "--wait=false"]);
    let ts = hub.ok(&[
        "get",
        "cm",
        "held",
        "-o",
        "jsonpath={.metadata.deletionTimestamp}",
    ]);
    assert!(
        !ts.is_empty(),
        "a deletion with finalizers marks the object"
    );
    hub.ok(&[
        "patch",
        "cm",
        "held",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
    ]);
    hub.ok(&["wait", "--for=delete", "cm/held", "--timeout=10s"]);
}

#[test]
fn owner_references_are_garbage_collected() {
    let hub = Hub::start();
    let uid = {
        hub.ok_stdin(&["create", "-f", "-"], r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner","namespace":"default"}}"#);
        hub.ok(&["get", "cm", "owner", "-o", "jsonpath={.metadata.uid}"])
    };
    let dep = |name: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"default","ownerReferences":[{{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"{uid}"}}]}}}}"#
        )
    };
    hub.ok_stdin(&["create", "-f", "-"], &dep("dep1"));
    hub.ok_stdin(&["create", "-f", "-"], &dep("dep2"));
    // Orphan: dependents stay and lose their reference.
    hub.ok(&["delete", "cm", "owner", "--cascade=orphan"]);
    hub.ok(&["wait", "--for=delete", "cm/owner", "--timeout=10s"]);
    assert_eq!(
        hub.ok(&[
            "get",
            "cm",
            "dep1",
            "-o",
            "jsonpath={.metadata.ownerReferences}"
        ]),
        ""
    );

    // Background: dependents of a deleted owner go.
    hub.ok_stdin(&["create", "-f", "-"], r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner2","namespace":"default"}}"#);
    let uid2 = hub.ok(&["get", "cm", "owner2", "-o", "jsonpath={.metadata.uid}"]);
    hub.ok_stdin(
        &["create", "-f", "-"],
        &dep("dep3")
            .replace(&uid, &uid2)
            .replace("\"owner\"", "\"owner2\""),
    );
    hub.ok(&["delete", "cm", "owner2"]);
    hub.ok(&["wait", "--for=delete", "cm/dep3", "--timeout=10s"]);

    // Foreground: the owner waits for its dependents.
    hub.ok_stdin(&["create", "-f", "-"], r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"owner3","namespace":"default"}}"#);
    let uid3 = hub.ok(&["get", "cm", "owner3", "-o", "jsonpath={.metadata.uid}"]);
    hub.ok_stdin(
        &["create", "-f", "-"],
        &dep("dep4")
            .replace(&uid, &uid3)
            .replace("\"owner\"", "\"owner3\""),
    );
    hub.ok(&[
        "delete",
        "cm",
        "owner3",
        "--cascade=foreground",
        "--timeout=20s",
    ]);
    let e = hub.fails(&["get", "cm", "dep4"]);
    assert!(e.contains("not found"), "{e}");
}

/// A watch from a resourceVersion older than the hub's start replays every later change from
/// the store's history (as etcd does until compaction), after a kill -9 too: informers resume
/// instead of the whole fleet re-listing at each hub restart.
#[test]
fn watch_resumes_across_a_restart() {
    let mut hub = Hub::start();
    hub.ok(&["create", "namespace", "r"]);
    let cm = |name: &str| {
        format!(
            r#"{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"name":"{name}","namespace":"r"}}}}"#
        )
    };
    let rv = hub.ok_stdin(
        &[
            "create",
            "-f",
            "-",
            "-o",
            "jsonpath={.metadata.resourceVersion}",
        ],
        &cm("before"),
    );
    hub.ok_stdin(&["create", "-f", "-"], &cm("after-1"));
    hub.ok(&["label", "cm", "before", "-n", "r", "v=2"]);
    hub.kill9();
    hub.restart();
    hub.ok_stdin(&["create", "-f", "-"], &cm("after-2"));
    let path =
        format!("/api/v1/namespaces/r/configmaps?watch=1&resourceVersion={rv}&timeoutSeconds=2");
    let out = hub.ok(&["get", "--raw", &path]);
    let events: Vec<(String, String)> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON watch event");
            (
                v["type"].as_str().unwrap_or_default().to_owned(),
                v["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("ADDED", "after-1"),
        ("MODIFIED", "before"),
        ("ADDED", "after-2"),
    ]
    .iter()
    .map(|(t, n)| (t.to_string(), n.to_string()))
    .collect();
    assert_eq!(
        events, want,
        "every change after {rv}, once, in order: {out}"
    );
}
