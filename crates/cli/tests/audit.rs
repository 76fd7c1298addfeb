//! The audit log through the real binary: a Policy file decides per request how much is
//! logged; each logged request is one `audit.k8s.io/v1` Event line with the user, verb, object
//! reference, code and (by level) the bodies; a refused request is logged with its 403; every
//! response carries its event's `Audit-ID`; a bad policy stops the hub at start.

mod common;

use std::process::Command;

use common::{Hub, FLOTILLA};
use serde_json::Value;

const POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: None
    nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/version", "/api*", "/openapi*"]
    verbs: [get]
  - level: Metadata
    resources: [{group: "", resources: [secrets]}]
  - level: RequestResponse
    resources: [{group: "", resources: [configmaps]}]
    namespaces: [audited]
  - level: None
    verbs: [get, list, watch]
  - level: Metadata
"#;

fn events(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The events the log holds once it holds one matching `pred` (the writer is a thread).
fn wait_for(path: &std::path::Path, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
    for _ in 0..100 {
        let all = events(path);
        if all.iter().any(&pred) {
            return all;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("no such event in {:#?}", events(path));
}

/// A hub auditing as `policy` says into the returned log, both files in the returned directory.
fn audited_hub(policy: &str) -> (tempfile::TempDir, Hub, std::path::PathBuf) {
    let conf = tempfile::tempdir().expect("temp dir");
    let policy_file = conf.path().join("policy.yaml");
    std::fs::write(&policy_file, policy).expect("write the policy");
    let log = conf.path().join("audit.log");
    let hub = Hub::start_with(&[
        "--audit-policy-file",
        policy_file.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
    ]);
    (conf, hub, log)
}

#[test]
fn requests_are_audited_as_the_policy_says() {
    let (_conf, hub, log) = audited_hub(POLICY);
    hub.ok(&["create", "namespace", "audited"]);
    hub.ok(&[
        "-n",
        "audited",
        "create",
        "secret",
        "generic",
        "db",
        "--from-literal=password=hunter2",
    ]);
    hub.ok(&[
        "-n",
        "audited",
        "create",
        "configmap",
        "cfg",
        "--from-literal=k=v",
    ]);
    hub.ok(&["-n", "audited", "get", "configmaps"]);

    let all = wait_for(&log, |e| {
        e["objectRef"]["resource"] == "configmaps"
            && e["verb"] == "list"
            && e["objectRef"]["namespace"] == "audited"
    });
    let secret = all
        .iter()
        .find(|e| e["objectRef"]["resource"] == "secrets" && e["verb"] == "create")
        .expect("the Secret's create is logged");
    assert_eq!(secret["kind"], "Event");
    assert_eq!(secret["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(secret["level"], "Metadata");
    assert_eq!(secret["stage"], "ResponseComplete");
    assert_eq!(secret["verb"], "create");
    assert_eq!(secret["objectRef"]["namespace"], "audited");
    assert_eq!(secret["responseStatus"]["code"], 201);
    assert!(secret["user"]["username"].is_string());
    assert_eq!(secret["sourceIPs"][0], "127.0.0.1");
    assert!(secret["userAgent"]
        .as_str()
        .unwrap_or_default()
        .contains("kubectl"));
    assert!(
        secret.get("requestObject").is_none(),
        "Metadata logs no body"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains("aHVudGVyMg=="),
        "the Secret's data is not in the log"
    );

    let cm = all
        .iter()
        .find(|e| e["objectRef"]["resource"] == "configmaps" && e["objectRef"]["name"] == "cfg")
        .unwrap_or_else(|| {
            panic!(
                "the ConfigMap's create is not logged: {:#?}",
                all.iter()
                    .filter(|e| e["objectRef"]["resource"] == "configmaps")
                    .collect::<Vec<_>>()
            )
        });
    assert_eq!(cm["level"], "RequestResponse");
    assert_eq!(cm["requestObject"]["data"]["k"], "v");
    assert_eq!(cm["responseObject"]["metadata"]["name"], "cfg");
    // The list of ConfigMaps in "audited" matches the RequestResponse rule first.
    assert!(all
        .iter()
        .any(|e| e["objectRef"]["resource"] == "configmaps" && e["verb"] == "list"));
    // Reads elsewhere are not logged (level None), and neither are the discovery gets.
    assert!(!all.iter().any(|e| e["verb"] == "get"
        && e["objectRef"]["resource"] != "configmaps"
        && e["objectRef"].is_object()));
    assert!(!all.iter().any(|e| e["requestURI"] == "/version"));

    // A refused request: its 403, with the reason.
    hub.ok(&["-n", "audited", "create", "serviceaccount", "nobody"]);
    let token = hub.ok(&["-n", "audited", "create", "token", "nobody"]);
    let denied = hub.kubectl(&[
        "--token",
        token.trim(),
        "-n",
        "audited",
        "delete",
        "secret",
        "db",
    ]);
    assert!(!denied.status.success());
    let all = wait_for(&log, |e| e["responseStatus"]["code"] == 403);
    let refused = all
        .iter()
        .find(|e| e["responseStatus"]["code"] == 403)
        .unwrap();
    assert_eq!(refused["verb"], "delete");
    assert_eq!(
        refused["user"]["username"],
        "system:serviceaccount:audited:nobody"
    );
    assert_eq!(refused["responseStatus"]["reason"], "Forbidden");

    // The Audit-ID header names the event.
    let verbose = hub.kubectl(&["-v=8", "-n", "audited", "delete", "configmap", "cfg"]);
    let stderr = String::from_utf8_lossy(&verbose.stderr);
    let id = stderr
        .lines()
        .find_map(|l| l.split("Audit-Id: ").nth(1))
        .unwrap_or_else(|| panic!("no Audit-Id header: {stderr}"))
        .trim()
        .to_string();
    wait_for(&log, |e| {
        e["auditID"] == id.as_str() && e["verb"] == "delete"
    });
}

#[test]
fn every_stage_is_logged_as_kube_apiserver_logs_it() {
    let rules = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n\
                 - level: Metadata\n  namespaces: [staged]\n- level: None\n";
    let (_conf, hub, log) = audited_hub(rules);
    hub.ok(&["create", "namespace", "staged"]);
    hub.ok(&["-n", "staged", "create", "configmap", "cfg"]);
    // A watch the hub ends after a second.
    hub.ok(&[
        "get",
        "--raw",
        "/api/v1/namespaces/staged/configmaps?watch=1&timeoutSeconds=1",
    ]);
    let stages = |verb: &str, all: &[Value]| -> Vec<(String, String)> {
        all.iter()
            .filter(|e| e["verb"] == verb && e["objectRef"]["namespace"] == "staged")
            // Not the hub's own controllers (the namespace's root CA, its ServiceAccount).
            .filter(|e| {
                e["userAgent"]
                    .as_str()
                    .is_some_and(|a| a.contains("kubectl"))
            })
            .map(|e| {
                let field = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
                (field("auditID"), field("stage"))
            })
            .collect()
    };
    let all = wait_for(&log, |e| {
        e["verb"] == "watch" && e["stage"] == "ResponseComplete"
    });
    // A create: received (no answer yet), then complete, under one audit ID.
    let create = stages("create", &all);
    assert_eq!(create.len(), 2, "{create:?}");
    assert_eq!(create[0].0, create[1].0);
    assert_eq!(create[0].1, "RequestReceived");
    assert_eq!(create[1].1, "ResponseComplete");
    let received = all
        .iter()
        .find(|e| e["auditID"] == create[0].0.as_str() && e["stage"] == "RequestReceived")
        .unwrap();
    assert!(received.get("responseStatus").is_none(), "{received}");
    assert_eq!(received["objectRef"]["resource"], "configmaps");
    // A watch: received, started, and complete once its stream ended.
    let watch = stages("watch", &all);
    let names: Vec<&str> = watch.iter().map(|(_, s)| s.as_str()).collect();
    assert_eq!(
        names,
        ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    );
    assert!(watch.iter().all(|(id, _)| *id == watch[0].0), "{watch:?}");
}

#[test]
fn a_bad_policy_stops_the_hub() {
    let conf = tempfile::tempdir().expect("temp dir");
    let policy = conf.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Loud}]\n",
    )
    .unwrap();
    let out = Command::new(FLOTILLA)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(conf.path().join("hub"))
        .arg("--audit-policy-file")
        .arg(&policy)
        .arg("--audit-log-path")
        .arg(conf.path().join("audit.log"))
        .output()
        .expect("run flotilla serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("policy.yaml") && err.contains("Loud"), "{err}");
    // One without the other is refused by the command line.
    let out = Command::new(FLOTILLA)
        .args(["serve", "--audit-policy-file"])
        .arg(&policy)
        .output()
        .expect("run flotilla serve");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--audit-log-path"));
}
