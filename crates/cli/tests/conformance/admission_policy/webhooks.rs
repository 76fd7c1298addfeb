//! Admission webhooks called at their `clientConfig.url`: a real HTTPS webhook server runs in
//! the test (its own CA, given to the hub as caBundle), mutating objects with a JSONPatch or
//! refusing them; unreachable webhooks are judged by their failure policy; and deletes meet
//! validating webhooks and policies.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

use super::created;
use crate::common::Hub;

/// A webhook server on 127.0.0.1 under its own CA: it answers every AdmissionReview by adding
/// the label `mutated: "yes"` (JSONPatch) with a warning, or at `/deny` by refusing it.
/// Returns its URL (`…/mutate`) and the CA (PEM).
fn webhook_server() -> (String, String) {
    let ca_key = rcgen::KeyPair::generate().expect("CA key");
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca_cert = ca_params.self_signed(&ca_key).expect("CA");
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let key = rcgen::KeyPair::generate().expect("key");
    let params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).expect("params");
    let cert = params.signed_by(&key, &issuer).expect("server cert");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
        )
        .expect("TLS config");
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let config = config.clone();
            std::thread::spawn(move || {
                let conn = rustls::ServerConnection::new(config).expect("TLS session");
                let mut tls = rustls::StreamOwned::new(conn, tcp);
                let _ = serve_one(&mut tls);
            });
        }
    });
    (format!("https://localhost:{port}/mutate"), ca_cert.pem())
}

fn serve_one(stream: &mut impl ReadWrite) -> std::io::Result<()> {
    let mut reader = BufReader::new(&mut *stream);
    let mut length = 0;
    let mut request_line = String::new();
    reader.read_line(&mut request_line)?;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line)?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let request = &review["request"];
    let patch = if request["object"]["metadata"]["labels"].is_object() {
        json!([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}])
    } else {
        json!([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}])
    };
    let answer = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "response": {"uid": request["uid"], "allowed": true, "patchType": "JSONPatch",
            "patch": base64::engine::general_purpose::STANDARD.encode(patch.to_string()),
            "warnings": [format!("webhook saw {}", request["operation"].as_str().unwrap_or(""))]}});
    // `/deny` answers as a validating webhook that refuses what it is sent.
    if request_line.contains(" /slow?timeout=") {
        // Past any timeout a test gives it.
        std::thread::sleep(Duration::from_secs(3));
    }
    let answer = if request_line.contains(" /deny?timeout=") {
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": request["uid"], "allowed": false,
                "status": {"code": 403, "reason": "Forbidden", "message": format!("{} of {} refused", request["operation"].as_str().unwrap_or(""), request["name"].as_str().unwrap_or(""))}}})
    } else {
        answer
    };
    let text = answer.to_string();
    write!(
        stream,
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    )?;
    stream.flush()
}

trait ReadWrite: Read + Write {}
impl<T: Read + Write> ReadWrite for T {}

fn mutating_config(name: &str, client_config: Value, failure: &str, ns_label: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{"name": format!("{name}.example.com"), "clientConfig": client_config,
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}],
            "namespaceSelector": {"matchLabels": {ns_label: "true"}},
            "failurePolicy": failure, "sideEffects": "None", "admissionReviewVersions": ["v1"]}]})
}

#[test]
fn a_mutating_webhook_adds_a_label_and_failure_policies_decide_unreachable_webhooks() {
    let hub = Hub::start();
    let (url, ca) = webhook_server();
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&ca);
    hub.ok(&["create", "namespace", "hooked"]);
    hub.ok(&["label", "namespace", "hooked", "hooked=true"]);
    let mut labeler = mutating_config(
        "labeler",
        json!({"url": url, "caBundle": ca_bundle}),
        "Fail",
        "hooked",
    );
    labeler["webhooks"][0]["matchConditions"] =
        json!([{"name": "not-skip-me", "expression": "object.metadata.name != 'skip-me'"}]);
    let stored: Value = serde_json::from_str(
        &hub.ok_stdin(&["create", "-f", "-", "-o", "json"], &labeler.to_string()),
    )
    .expect("config JSON");
    // kube's defaults.
    let h = &stored["webhooks"][0];
    assert_eq!(h["timeoutSeconds"], json!(10), "{stored}");
    assert_eq!(h["matchPolicy"], json!("Equivalent"), "{stored}");
    assert_eq!(h["reinvocationPolicy"], json!("Never"), "{stored}");
    assert_eq!(h["objectSelector"], json!({}), "{stored}");
    let table = hub.ok(&["get", "mutatingwebhookconfiguration", "labeler"]);
    assert!(
        table.starts_with("NAME") && table.contains("WEBHOOKS"),
        "{table}"
    );
    let row: Vec<&str> = table
        .lines()
        .nth(1)
        .unwrap_or("")
        .split_whitespace()
        .collect();
    assert_eq!(row[..2], ["labeler", "1"], "{table}");

    let deadline = Instant::now() + Duration::from_secs(20);
    for i in 0.. {
        let name = format!("cm{i}");
        let out = hub.kubectl(&["create", "configmap", "-n", "hooked", &name, "-o", "json"]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        let cm: Value = serde_json::from_slice(&out.stdout).expect("configmap JSON");
        if cm["metadata"]["labels"]["mutated"] == "yes" {
            assert!(stderr.contains("webhook saw CREATE"), "{stderr}");
            let got = hub.ok(&[
                "get",
                "configmap",
                "-n",
                "hooked",
                &name,
                "-o",
                "jsonpath={.metadata.labels.mutated}",
            ]);
            assert_eq!(got, "yes");
            break;
        }
        assert!(Instant::now() < deadline, "never mutated: {cm}");
        std::thread::sleep(Duration::from_millis(100));
    }
    // Its match condition leaves `skip-me` alone.
    hub.ok(&["create", "configmap", "-n", "hooked", "skip-me"]);
    let labels = [
        "get",
        "configmap",
        "-n",
        "hooked",
        "skip-me",
        "-o",
        "jsonpath={.metadata.labels}",
    ];
    assert_eq!(hub.ok(&labels), "");
    // Outside the namespace selector the webhook is not called.
    hub.ok(&["create", "configmap", "plain"]);
    assert_eq!(
        hub.ok(&[
            "get",
            "configmap",
            "plain",
            "-o",
            "jsonpath={.metadata.labels}"
        ]),
        ""
    );

    // A service the hub cannot reach: Fail refuses the write, Ignore lets it through.
    hub.ok(&["create", "namespace", "unreachable"]);
    hub.ok(&["label", "namespace", "unreachable", "unreachable=true"]);
    let svc = json!({"service": {"namespace": "default", "name": "nowhere"}});
    created(
        &hub,
        &mutating_config("failing", svc.clone(), "Fail", "unreachable"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    for i in 0.. {
        let out = hub.kubectl(&["create", "configmap", "-n", "unreachable", &format!("x{i}")]);
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("failed calling webhook \"failing.example.com\""),
                "{err}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "an unreachable Fail webhook never refused"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    hub.ok(&["delete", "mutatingwebhookconfiguration", "failing"]);
    created(
        &hub,
        &mutating_config("ignoring", svc, "Ignore", "unreachable"),
    );
    // The hub's admission reads configurations as they reach its cache, a moment after the
    // delete above is acknowledged.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !hub
        .kubectl(&["create", "configmap", "-n", "unreachable", "passes"])
        .status
        .success()
    {
        assert!(Instant::now() < deadline, "an Ignore webhook kept refusing");
        std::thread::sleep(Duration::from_millis(100));
    }
    hub.ok(&["delete", "mutatingwebhookconfiguration", "ignoring"]);

    // A webhook slower than its timeoutSeconds fails the call.
    let mut slow = mutating_config(
        "slow",
        json!({"url": url.replace("/mutate", "/slow"), "caBundle": ca_bundle}),
        "Fail",
        "unreachable",
    );
    slow["webhooks"][0]["timeoutSeconds"] = json!(1);
    created(&hub, &slow);
    let deadline = Instant::now() + Duration::from_secs(20);
    for i in 0.. {
        let started = Instant::now();
        let out = hub.kubectl(&["create", "configmap", "-n", "unreachable", &format!("s{i}")]);
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("failed calling webhook \"slow.example.com\"")
                    && err.contains("/slow?timeout=1s\": context deadline exceeded"),
                "{err}"
            );
            assert!(
                started.elapsed() < Duration::from_secs(3),
                "the timeout was not kept"
            );
            break;
        }
        assert!(Instant::now() < deadline, "a slow webhook never timed out");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_validating_webhook_and_a_policy_judge_deletes() {
    let hub = Hub::start();
    let (url, ca) = webhook_server();
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&ca);
    let deny_url = url.replace("/mutate", "/deny");
    hub.ok(&["create", "configmap", "guarded"]);
    hub.ok(&["create", "configmap", "free"]);
    created(
        &hub,
        &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "no-deletes"},
            "webhooks": [{"name": "no-deletes.example.com",
                "clientConfig": {"url": deny_url, "caBundle": ca_bundle},
                "rules": [{"operations": ["DELETE"], "apiGroups": [""], "apiVersions": ["v1"],
                    "resources": ["configmaps"]}],
                "objectSelector": {"matchLabels": {"protected": "true"}},
                "sideEffects": "None", "admissionReviewVersions": ["v1"]}]}),
    );
    hub.ok(&["label", "configmap", "guarded", "protected=true"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = hub.kubectl(&["delete", "configmap", "guarded", "--dry-run=server"]);
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(
                err.contains("admission webhook \"no-deletes.example.com\" denied the request: DELETE of guarded refused"),
                "{err}"
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the webhook never refused a delete"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    hub.ok(&["get", "configmap", "guarded"]);
    hub.ok(&[
        "delete",
        "mutatingwebhookconfiguration,validatingwebhookconfiguration",
        "--all",
    ]);

    // A policy sees the deleted object as oldObject.
    created(
        &hub,
        &json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "keep"},
            "spec": {"matchConstraints": {"resourceRules": [{"operations": ["DELETE"], "apiGroups": [""],
                "apiVersions": ["v1"], "resources": ["configmaps"]}]},
                "validations": [{"expression": "oldObject.metadata.name != 'guarded'",
                    "message": "guarded stays", "reason": "Forbidden"}]}}),
    );
    created(&hub, &binding_all("keep-binding", "keep"));
    let deadline = Instant::now() + Duration::from_secs(20);
    // Until the policy (created after the webhooks' deletion, so seen after it) judges.
    while !String::from_utf8_lossy(
        &hub.kubectl(&["delete", "configmap", "guarded", "--dry-run=server"])
            .stderr,
    )
    .contains("ValidatingAdmissionPolicy 'keep'")
    {
        assert!(
            Instant::now() < deadline,
            "the policy never judged a delete"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let err = hub.fails(&["delete", "configmap", "guarded"]);
    assert!(
        err.contains("(Forbidden)")
            && err.contains(
                "ValidatingAdmissionPolicy 'keep' with binding 'keep-binding' denied request: guarded stays"
            ),
        "{err}"
    );
    hub.ok(&["get", "configmap", "guarded"]);

    // A Warn binding lets a delete through with a Warning header.
    let mut warn = binding_all("keep-warn", "keep");
    warn["spec"]["validationActions"] = json!(["Warn"]);
    created(&hub, &warn);
    hub.ok(&["delete", "validatingadmissionpolicybinding", "keep-binding"]);
    let want = "Validation failed for ValidatingAdmissionPolicy 'keep' with binding 'keep-warn': guarded stays";
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let out = hub.kubectl(&["delete", "configmap", "guarded", "--dry-run=server"]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        if out.status.success() && stderr.contains(want) {
            break;
        }
        assert!(Instant::now() < deadline, "no warning on delete: {stderr}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = hub.kubectl(&["delete", "configmap", "guarded"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.contains(want), "{stderr}");
    hub.ok(&["delete", "configmap", "free"]);
}

fn binding_all(name: &str, policy: &str) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name},
        "spec": {"policyName": policy, "validationActions": ["Deny"]}})
}
