//! ResourceInterpreters through the real binary and kubectl: the interpreters shipped in
//! `examples/interpreters/` are accepted and listed with their target, and one whose CEL rule
//! does not compile is refused at create with a 422 naming the rule and the compiler's error;
//! `flotilla explain interpret` shows what each rule returns for an object.

mod common;

use common::{Hub, FLOTILLA};

const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/interpreters");

#[test]
fn shipped_interpreters_are_accepted_and_bad_rules_refused() {
    let hub = Hub::start();
    hub.ok(&["apply", "-f", EXAMPLES]);
    let listed = hub.ok(&["get", "resourceinterpreters"]);
    let lines: Vec<&str> = listed.lines().collect();
    assert!(
        lines[0].contains("TARGET-API") && lines[0].contains("TARGET-KIND"),
        "{listed}"
    );
    for (name, api, kind) in [
        ("argoproj.io-rollout", "argoproj.io/v1alpha1", "Rollout"),
        (
            "apps.kruise.io-cloneset",
            "apps.kruise.io/v1alpha1",
            "CloneSet",
        ),
        ("batch-cronjob", "batch/v1", "CronJob"),
    ] {
        assert!(
            lines.iter().any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.starts_with(&[name, api, kind])
            }),
            "{name} not listed with its target: {listed}"
        );
    }

    let bad = r#"{"apiVersion": "config.flotilla.io/v1alpha1", "kind": "ResourceInterpreter",
        "metadata": {"name": "broken"},
        "spec": {"target": {"apiVersion": "example.com/v1", "kind": "Thing"},
                 "replicas": {"count": "self.spec.replicas +"},
                 "reviseReplicas": {"path": "spec..replicas"}}}"#;
    let out = hub.kubectl_stdin(&["create", "-f", "-"], bad);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a bad rule was accepted");
    assert!(
        err.contains("is invalid")
            && err.contains("spec.replicas.count")
            && err.contains("compilation failed")
            && err.contains("spec.reviseReplicas.path"),
        "{err}"
    );
    let raw = hub.kubectl_stdin(&["create", "-f", "-", "-v=6"], bad);
    let log = String::from_utf8_lossy(&raw.stderr);
    assert!(log.contains("422 Unprocessable Entity"), "{log}");
    let missing = hub.kubectl(&["get", "resourceinterpreter", "broken"]);
    assert!(
        !missing.status.success(),
        "the refused interpreter was stored"
    );
}

#[test]
fn explain_interpret_shows_each_rule_for_an_object() {
    let hub = Hub::start();
    hub.ok(&["apply", "-f", &format!("{EXAMPLES}/batch-cronjob.yaml")]);
    hub.ok(&["create", "namespace", "ops"]);
    hub.ok_stdin(
        &["-n", "ops", "apply", "-f", "-"],
        r#"{"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "backup"},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
              "restartPolicy": "Never", "containers": [{"name": "b", "image": "busybox"}],
              "volumes": [{"name": "s", "configMap": {"name": "script"}}]}}}}}}"#,
    );
    hub.ok(&["-n", "ops", "create", "deployment", "web", "--image=nginx"]);
    let explain = |object: &str| {
        std::process::Command::new(FLOTILLA)
            .args(["explain", "interpret", object, "-n", "ops", "--kubeconfig"])
            .arg(&hub.kubeconfig)
            .env("RUST_BACKTRACE", "0")
            .output()
            .expect("run flotilla explain")
    };
    let out = explain("cj/backup");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.starts_with("cj/backup: read by ResourceInterpreter batch-cronjob"),
        "{text}"
    );
    assert!(
        text.contains(r#"  health: {"healthy":true,"reason":""}"#),
        "{text}"
    );
    assert!(
        text.contains(
            r#"{"apiVersion":"v1","kind":"ConfigMap","namespace":"ops","name":"script"}"#
        ),
        "{text}"
    );
    let out = explain("deployment/web");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "no ResourceInterpreter targets apps/v1 Deployment; flotilla's compiled rules apply"
        ),
        "{text}"
    );
    let out = explain("cronjob/nothere");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cronjob/nothere does not exist in namespace ops"),
        "{err}"
    );
}
