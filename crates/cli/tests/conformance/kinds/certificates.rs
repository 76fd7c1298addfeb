//! CertificateSigningRequests: requester, /status and /approval, signer authorization.

use super::{get, row};
use crate::common::Hub;

/// A certificate request (openssl, P-256, CN e2e.example.com).
const CSR_PEM: &str = "-----BEGIN CERTIFICATE REQUEST-----
MIHTMHwCAQAwGjEYMBYGA1UEAwwPZTJlLmV4YW1wbGUuY29tMFkwEwYHKoZIzj0C
AQYIKoZIzj0DAQcDQgAE+wJ828bMjLor8Uoraxhiz53yR3JAg0E67KWyAoBjp/94
YefNUGr6Y8+Tc9rFlBFHulo2U29Gg6C5QL37W4v6t6AAMAoGCCqGSM49BAMCA0cA
MEQCIHjLEiZLEl4NQizmnl0+9goo5Pd5ieMvPhzDFqhxXw3zAiA30L3d38pb7EuP
EsSdCrtMUTcS8+6mQ1HSGdFFZ+jxcA==
-----END CERTIFICATE REQUEST-----
";

#[test]
fn certificate_signing_requests_change_approval_only_through_approval() {
    use base64::Engine as _;
    let hub = Hub::start();
    let request = base64::engine::general_purpose::STANDARD.encode(CSR_PEM);
    let csr = format!(
        r#"{{"apiVersion":"certificates.k8s.io/v1","kind":"CertificateSigningRequest",
            "metadata":{{"name":"c1"}},
            "spec":{{"request":"{request}","signerName":"example.com/e2e","username":"mallory",
                     "expirationSeconds":3600,"usages":["digital signature","server auth"]}}}}"#
    );
    hub.ok_stdin(&["create", "-f", "-"], &csr);
    let stored = get(&hub, &["csr", "c1"]);
    let user = stored["spec"]["username"].as_str().unwrap_or_default();
    assert!(
        !user.is_empty() && user != "mallory",
        "requester is the creator: {stored}"
    );
    assert_eq!(
        row(&hub, &["csr", "c1"]).last().map(String::as_str),
        Some("Pending")
    );

    // The main resource keeps spec and status; /status cannot approve.
    hub.ok(&[
        "patch",
        "csr",
        "c1",
        "--type=merge",
        "-p",
        r#"{"spec":{"signerName":"example.com/other"}}"#,
    ]);
    assert_eq!(
        get(&hub, &["csr", "c1"])["spec"]["signerName"],
        "example.com/e2e"
    );
    let err = hub.fails(&[
        "patch",
        "csr",
        "c1",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"conditions":[{"type":"Approved","status":"True"}]}}"#,
    ]);
    assert!(err.contains("Approved"), "{err}");

    // kubectl certificate approve writes /approval (as protobuf).
    hub.ok(&["certificate", "approve", "c1"]);
    let approved = get(&hub, &["csr", "c1"]);
    assert_eq!(
        approved["status"]["conditions"][0]["type"], "Approved",
        "{approved}"
    );
    assert!(approved["status"]["conditions"][0]["lastUpdateTime"].is_string());
    assert_eq!(
        row(&hub, &["csr", "c1"]).last().map(String::as_str),
        Some("Approved")
    );
    // Approving takes `approve` on the signer, not only update on /approval.
    hub.ok_stdin(
        &["create", "-f", "-"],
        &csr.replace(r#""name":"c1""#, r#""name":"c2""#),
    );
    hub.ok(&["create", "serviceaccount", "approver"]);
    hub.ok(&[
        "create",
        "clusterrole",
        "csr-approver",
        "--verb=get,list,update",
        "--resource=certificatesigningrequests,certificatesigningrequests/approval",
    ]);
    hub.ok(&[
        "create",
        "clusterrolebinding",
        "csr-approver",
        "--clusterrole=csr-approver",
        "--serviceaccount=default:approver",
    ]);
    let token = hub.ok(&["create", "token", "approver"]);
    let approve =
        |hub: &Hub| hub.kubectl(&["--token", token.trim(), "certificate", "approve", "c2"]);
    let out = approve(&hub);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains(
                "user not permitted to approve requests with signerName \"example.com/e2e\""
            ),
        "{err}"
    );
    let role = r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole",
        "metadata":{"name":"signer-approver"},
        "rules":[{"apiGroups":["certificates.k8s.io"],"resources":["signers"],
                  "resourceNames":["example.com/*"],"verbs":["approve"]}]}"#;
    hub.ok_stdin(&["create", "-f", "-"], role);
    hub.ok(&[
        "create",
        "clusterrolebinding",
        "signer-approver",
        "--clusterrole=signer-approver",
        "--serviceaccount=default:approver",
    ]);
    let out = approve(&hub);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A request is never both approved and denied, even through /approval.
    let mut denied = approved.clone();
    denied["status"]["conditions"]
        .as_array_mut()
        .expect("conditions")
        .push(serde_json::json!({"type": "Denied", "status": "True", "reason": "e2e"}));
    let out = hub.kubectl_stdin(
        &[
            "replace",
            "--raw",
            "/apis/certificates.k8s.io/v1/certificatesigningrequests/c1/approval",
            "-f",
            "-",
        ],
        &denied.to_string(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("mutually exclusive"),
        "{err}"
    );
}
