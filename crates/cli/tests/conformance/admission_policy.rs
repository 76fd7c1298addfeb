//! Conformance: admissionregistration.k8s.io/v1 — ValidatingAdmissionPolicy with its bindings
//! judging writes with CEL (Deny with kube's message, Warn as a Warning header), the policy's
//! type check in its status, and webhooks called at their `clientConfig.url` (a real HTTPS
//! webhook server in the test) that mutate the object or fail by their failure policy.

mod webhooks;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::Hub;

fn apply(hub: &Hub, obj: &Value) -> std::process::Output {
    hub.kubectl_stdin(&["create", "-f", "-"], &obj.to_string())
}

/// Create `obj`, requiring success; kubectl's stderr (its warnings).
fn created(hub: &Hub, obj: &Value) -> String {
    let out = apply(hub, obj);
    assert!(
        out.status.success(),
        "create {obj} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn labeled_namespace(hub: &Hub, name: &str) {
    hub.ok(&["create", "namespace", name]);
    hub.ok(&["label", "namespace", name, "policy-test=true"]);
}

fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": "nginx"}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "nginx"}},
            "template": {"metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}})
}

fn replicas_policy(name: &str, expression: &str, message_expression: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name},
        "spec": {
            "matchConstraints": {
                "namespaceSelector": {"matchLabels": {"policy-test": "true"}},
                "resourceRules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"],
                    "apiVersions": ["v1"], "resources": ["deployments"]}]},
            "validations": [{"expression": expression, "messageExpression": message_expression}]}})
}

fn binding(name: &str, policy: &str, action: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": policy, "validationActions": [action],
            "matchResources": {"namespaceSelector": {"matchLabels": {"policy-test": "true"}}}}})
}

/// Create `obj` in `ns` until the policy (just created, read from the hub's cache) judges it;
/// the last stderr.
fn create_until_refused(hub: &Hub, ns: &str, obj: &Value) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = hub.kubectl_stdin(&["create", "-n", ns, "-f", "-"], &obj.to_string());
        if !out.status.success() {
            return String::from_utf8_lossy(&out.stderr).into_owned();
        }
        let name = obj["metadata"]["name"].as_str().unwrap_or("");
        hub.ok(&["delete", "deployment", "-n", ns, name]);
        assert!(Instant::now() < deadline, "the policy never denied {obj}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_policy_denies_a_deployment_over_its_replica_limit_with_kubes_message() {
    let hub = Hub::start();
    labeled_namespace(&hub, "guarded");
    hub.ok(&["create", "namespace", "free"]);
    created(
        &hub,
        &replicas_policy(
            "max-replicas",
            "object.spec.replicas <= 2",
            "'wants at most 2 replicas, got ' + string(object.spec.replicas)",
        ),
    );
    created(
        &hub,
        &binding("max-replicas-binding", "max-replicas", "Deny"),
    );

    let err = create_until_refused(&hub, "guarded", &deployment("big", 5));
    assert!(
        err.contains("ValidatingAdmissionPolicy 'max-replicas' with binding 'max-replicas-binding' denied request: wants at most 2 replicas, got 5"),
        "{err}"
    );
    // 422 Invalid with the resource in its details (kubectl words it from them), as kube
    // answers a validation without a reason.
    let raw = hub.kubectl_stdin(
        &[
            "create",
            "--raw",
            "/apis/apps/v1/namespaces/guarded/deployments",
            "-f",
            "-",
        ],
        &deployment("big", 5).to_string(),
    );
    let raw_err = String::from_utf8_lossy(&raw.stderr);
    assert!(
        !raw.status.success()
            && raw_err.contains(
                "The deployments \"big\" is invalid: : ValidatingAdmissionPolicy 'max-replicas'"
            ),
        "{raw_err}"
    );
    assert!(!hub
        .kubectl(&["get", "deployment", "-n", "guarded", "big"])
        .status
        .success());

    // Within the limit, or where the binding does not reach, the write passes.
    hub.ok_stdin(
        &["create", "-n", "guarded", "-f", "-"],
        &deployment("small", 2).to_string(),
    );
    hub.ok_stdin(
        &["create", "-n", "free", "-f", "-"],
        &deployment("big", 5).to_string(),
    );
    // An update of the main resource is judged too (a /scale write is `deployments/scale`,
    // which the rule does not name, as in kube).
    let err = hub.fails(&[
        "patch",
        "deployment",
        "-n",
        "guarded",
        "small",
        "-p",
        r#"{"spec":{"replicas":3}}"#,
    ]);
    assert!(err.contains("wants at most 2 replicas, got 3"), "{err}");

    // A policy on deployments/scale judges the Scale a `kubectl scale` writes.
    let mut scale_policy = replicas_policy(
        "max-scale",
        "object.spec.replicas <= 2",
        "'scale to ' + string(object.spec.replicas) + ' refused'",
    );
    scale_policy["spec"]["matchConstraints"]["resourceRules"][0]["resources"] =
        json!(["deployments/scale"]);
    created(&hub, &scale_policy);
    created(&hub, &binding("max-scale-binding", "max-scale", "Deny"));
    let deadline = Instant::now() + Duration::from_secs(20);
    let scale = [
        "scale",
        "deployment",
        "-n",
        "guarded",
        "small",
        "--replicas=4",
    ];
    while hub
        .kubectl(&[&scale[..], &["--dry-run=server"]].concat())
        .status
        .success()
    {
        assert!(Instant::now() < deadline, "the scale policy never judged");
        std::thread::sleep(Duration::from_millis(100));
    }
    let err = hub.fails(&scale);
    assert!(
        err.contains("ValidatingAdmissionPolicy 'max-scale' with binding 'max-scale-binding' denied request: scale to 4 refused"),
        "{err}"
    );
    hub.ok(&[
        "scale",
        "deployment",
        "-n",
        "guarded",
        "small",
        "--replicas=1",
    ]);
}

#[test]
fn a_warn_binding_admits_with_a_warning_header() {
    let hub = Hub::start();
    labeled_namespace(&hub, "warned");
    created(
        &hub,
        &replicas_policy(
            "warn-replicas",
            "object.spec.replicas <= 1",
            "'replicas ' + string(object.spec.replicas)",
        ),
    );
    created(&hub, &binding("warn-binding", "warn-replicas", "Warn"));
    let want = "Validation failed for ValidatingAdmissionPolicy 'warn-replicas' with binding 'warn-binding': replicas 3";
    let deadline = Instant::now() + Duration::from_secs(20);
    for i in 0.. {
        let name = format!("d{i}");
        let mut d = deployment(&name, 3);
        d["metadata"]["namespace"] = json!("warned");
        let stderr = created(&hub, &d);
        if stderr.contains(want) {
            assert!(stderr.contains("Warning:"), "{stderr}");
            break;
        }
        assert!(Instant::now() < deadline, "no warning: {stderr}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn policy_status(hub: &Hub, name: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = hub.ok(&["get", "validatingadmissionpolicy", name, "-o", "json"]);
        let v: Value = serde_json::from_str(&out).expect("policy JSON");
        if !v["status"]["typeChecking"].is_null() {
            return v;
        }
        assert!(Instant::now() < deadline, "no typeChecking: {v}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn policies_are_type_checked_into_their_status_and_bad_expressions_refused() {
    let hub = Hub::start();
    created(
        &hub,
        &replicas_policy(
            "correct",
            "object.spec.replicas > 1",
            "'got ' + string(object.spec.replicas)",
        ),
    );
    let v = policy_status(&hub, "correct");
    // kubectl prints kube's columns.
    let table = hub.ok(&["get", "validatingadmissionpolicy", "correct"]);
    let header: Vec<&str> = table
        .lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        ["NAME", "VALIDATIONS", "PARAMKIND", "AGE"],
        "{table}"
    );
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(row[..3], ["correct", "1", "<unset>"], "{table}");
    assert_eq!(v["status"]["observedGeneration"], json!(1), "{v}");
    assert!(
        v["status"]["typeChecking"]["expressionWarnings"]
            .as_array()
            .is_none_or(Vec::is_empty),
        "{v}"
    );

    created(
        &hub,
        &replicas_policy(
            "confused",
            "object.spec.replicas > '1'",
            "'wants replicas > 1, got ' + object.spec.replicas",
        ),
    );
    let v = policy_status(&hub, "confused");
    let w = &v["status"]["typeChecking"]["expressionWarnings"];
    assert_eq!(w[0]["fieldRef"], "spec.validations[0].expression", "{v}");
    assert!(
        w[0]["warning"]
            .as_str()
            .unwrap_or("")
            .contains("found no matching overload for '_>_' applied to '(int, string)'"),
        "{v}"
    );
    assert_eq!(
        w[1]["fieldRef"], "spec.validations[0].messageExpression",
        "{v}"
    );
    assert!(
        w[1]["warning"]
            .as_str()
            .unwrap_or("")
            .contains("found no matching overload for '_+_' applied to '(string, int)'"),
        "{v}"
    );

    created(
        &hub,
        &replicas_policy("typo", "object.spec.replicass > 1", "'x'"),
    );
    let v = policy_status(&hub, "typo");
    assert!(
        v["status"]["typeChecking"]["expressionWarnings"][0]["warning"]
            .as_str()
            .unwrap_or("")
            .contains("undefined field 'replicass'"),
        "{v}"
    );

    // A syntax error is refused at create, as kube refuses it (422, at its field).
    let out = apply(
        &hub,
        &replicas_policy("broken", "object.spec.replicas >", "'x'"),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a broken expression was stored");
    assert!(
        err.contains("spec.validations[0].expression") && err.contains("compilation failed"),
        "{err}"
    );
    assert!(!hub
        .kubectl(&["get", "validatingadmissionpolicy", "broken"])
        .status
        .success());
}

#[test]
fn a_policy_on_a_custom_resource_is_type_checked_against_its_crd_schema() {
    let hub = Hub::start();
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "cronSpec": {"type": "string"}, "image": {"type": "string"},
                        "replicas": {"type": "integer"}}}}}}}]}});
    created(&hub, &crd);
    hub.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/crontabs.stable.example.com",
    ]);
    let policy = |name: &str, validations: Value| {
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": [{"operations": ["CREATE"],
                "apiGroups": ["stable.example.com"], "apiVersions": ["v1"], "resources": ["crontabs"]}]},
                "validations": validations}})
    };
    created(
        &hub,
        &policy(
            "crd-correct",
            json!([{"expression": "object.spec.replicas > 1"}]),
        ),
    );
    let v = policy_status(&hub, "crd-correct");
    assert_eq!(v["status"]["typeChecking"], json!({}), "{v}");
    created(
        &hub,
        &policy(
            "crd-confused",
            json!([{"expression": "object.spec.replicas > '1'"}, {"expression": "object.spec.maxRetries < 10"}]),
        ),
    );
    let v = policy_status(&hub, "crd-confused");
    let w = &v["status"]["typeChecking"]["expressionWarnings"];
    assert_eq!(w.as_array().map(Vec::len), Some(2), "{v}");
    assert_eq!(w[0]["fieldRef"], "spec.validations[0].expression", "{v}");
    assert!(
        w[0]["warning"]
            .as_str()
            .unwrap_or("")
            .contains("found no matching overload for '_>_' applied to '(int, string)'"),
        "{v}"
    );
    assert_eq!(w[1]["fieldRef"], "spec.validations[1].expression", "{v}");
    assert!(
        w[1]["warning"]
            .as_str()
            .unwrap_or("")
            .contains("undefined field 'maxRetries'"),
        "{v}"
    );
}

#[test]
fn a_binding_gives_its_policy_params_from_a_configmap() {
    let hub = Hub::start();
    labeled_namespace(&hub, "limited");
    hub.ok(&["create", "namespace", "params"]);
    hub.ok(&[
        "create",
        "configmap",
        "-n",
        "params",
        "limits",
        "--from-literal=max=3",
    ]);
    let mut policy = replicas_policy(
        "param-limit",
        "object.spec.replicas <= int(params.data.max)",
        "'at most ' + params.data.max + ' replicas'",
    );
    policy["spec"]["paramKind"] = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    created(&hub, &policy);
    let mut b = binding("param-limit-binding", "param-limit", "Deny");
    b["spec"]["paramRef"] = json!({"name": "limits", "namespace": "params",
        "parameterNotFoundAction": "Deny"});
    created(&hub, &b);

    let err = create_until_refused(&hub, "limited", &deployment("five", 5));
    assert!(
        err.contains("ValidatingAdmissionPolicy 'param-limit' with binding 'param-limit-binding' denied request: at most 3 replicas"),
        "{err}"
    );
    hub.ok_stdin(
        &["create", "-n", "limited", "-f", "-"],
        &deployment("three", 3).to_string(),
    );

    // With its params gone, a Deny parameterNotFoundAction refuses.
    hub.ok(&["delete", "configmap", "-n", "params", "limits"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = hub.kubectl_stdin(
            &["create", "-n", "limited", "--dry-run=server", "-f", "-"],
            &deployment("one", 1).to_string(),
        );
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            assert!(
                err.contains("failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"),
                "{err}"
            );
            break;
        }
        assert!(Instant::now() < deadline, "missing params never refused");
        std::thread::sleep(Duration::from_millis(100));
    }
}
