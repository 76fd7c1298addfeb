//! Token lifetimes: a TokenRequest for longer than `--service-account-max-token-expiration`
//! (default 24h) gets a token that lives that long, as kube-apiserver shortens it: no error, and
//! `spec.expirationSeconds`, `status.expirationTimestamp` and the JWT's `exp` all say the cap.

use std::process::Command;

use k8s_openapi::jiff::Timestamp;

use super::jwt_claims;
use crate::common::{json, Hub};

/// `kubectl create token bot --duration=D -o json` as the admin: the TokenRequest answered.
fn token_request(hub: &Hub, duration: &str) -> serde_json::Value {
    let duration = format!("--duration={duration}");
    json(&hub.ok(&[
        "create", "token", "bot", "-n", "default", &duration, "-o", "json",
    ]))
}

/// Checks the TokenRequest grants `seconds`, everywhere it says how long, and that the token
/// works.
fn assert_lifetime(hub: &Hub, answer: &serde_json::Value, seconds: i64) {
    assert_eq!(answer["spec"]["expirationSeconds"], seconds, "{answer}");
    let token = answer["status"]["token"].as_str().expect("a token");
    let claims = jwt_claims(token);
    let (iat, exp) = (claims["iat"].as_i64(), claims["exp"].as_i64());
    assert_eq!(exp.zip(iat).map(|(e, i)| e - i), Some(seconds), "{claims}");
    let expires: Timestamp = answer["status"]["expirationTimestamp"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .expect("an RFC 3339 expirationTimestamp");
    let left = expires.as_second() - Timestamp::now().as_second();
    assert!(
        (seconds - 120..=seconds).contains(&left),
        "expires in {left}s, not {seconds}s"
    );
    hub.ok(&["--token", token, "get", "--raw", "/api"]);
}

#[test]
fn a_token_never_outlives_the_max_expiration() {
    let hub = Hub::start();
    hub.ok(&["create", "serviceaccount", "bot", "-n", "default"]);
    // Ten years asked, a day (the default cap) given.
    assert_lifetime(&hub, &token_request(&hub, "87600h"), 24 * 3600);
    // Within the cap: as asked.
    assert_lifetime(&hub, &token_request(&hub, "15m"), 15 * 60);
    drop(hub);

    let hub = Hub::start_with(&["--service-account-max-token-expiration", "2h"]);
    hub.ok(&["create", "serviceaccount", "bot", "-n", "default"]);
    assert_lifetime(&hub, &token_request(&hub, "87600h"), 2 * 3600);
    assert_lifetime(&hub, &token_request(&hub, "1h"), 3600);
}

#[test]
fn a_max_expiration_outside_kube_apiservers_bounds_is_refused() {
    for value in ["30m", "5000000000s"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let out = Command::new(env!("CARGO_BIN_EXE_flotilla"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .arg("--data-dir")
            .arg(dir.path())
            .args(["--service-account-max-token-expiration", value])
            .output()
            .expect("run flotilla serve");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{value} accepted");
        assert!(stderr.contains("between 1h and 2^32"), "{stderr}");
        assert!(
            !dir.path().join("admin.kubeconfig").exists(),
            "refused before starting"
        );
    }
}
