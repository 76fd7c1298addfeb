use super::*;

#[test]
fn renewal_comes_at_half_the_time_left() {
    let h = |n: u64| Duration::from_secs(n * 3600);
    for (left, want) in [
        (h(24), h(12)),
        // A hub capping tokens at an hour: renewed every half hour, not every minute.
        (h(1), Duration::from_secs(1800)),
        (Duration::from_secs(4), RENEW_AT_LEAST_AFTER),
        (Duration::ZERO, RENEW_AT_LEAST_AFTER),
    ] {
        assert_eq!(renew_after(left), want, "{left:?}");
    }
}

/// A JWT with these claims (header and signature do not matter to the agent).
fn jwt(claims: serde_json::Value) -> String {
    use base64::Engine;
    let b64 = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
    format!(
        "{}.{}.{}",
        b64(br#"{"alg":"RS256"}"#),
        b64(claims.to_string().as_bytes()),
        b64(b"sig")
    )
}

#[test]
fn renewals_are_timed_by_the_lifetime_the_hub_granted() {
    let token = jwt(json!({"iat": 1_000_000, "exp": 1_000_000 + 3600, "sub": "x"}));
    assert_eq!(granted_lifetime(&token), Some(Duration::from_secs(3600)));
    assert_eq!(granted_lifetime("not a jwt"), None);
    assert_eq!(granted_lifetime(&jwt(json!({"exp": 5}))), None);

    // At start: the stored expiry by this clock, but never more than the token's lifetime (a
    // clock 5 minutes behind the hub's sees 5 minutes more left than there are).
    let dir = tempfile::tempdir().unwrap();
    let state = StateDir(dir.path().to_path_buf());
    let now = Timestamp::now();
    let expires = now + k8s_openapi::jiff::SignedDuration::from_secs(3600 + 300);
    std::fs::write(state.file(EXPIRY_FILE), expires.to_string()).unwrap();
    std::fs::write(state.file(TOKEN_FILE), &token).unwrap();
    assert_eq!(left_by_clock(&state), Duration::from_secs(3600));
    // Without a readable token, the clock alone.
    std::fs::write(state.file(TOKEN_FILE), "opaque").unwrap();
    let left = left_by_clock(&state);
    assert!(left > Duration::from_secs(3600 + 290), "{left:?}");
}
