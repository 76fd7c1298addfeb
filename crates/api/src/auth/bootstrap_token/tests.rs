//! Table-driven cases: which tokens have bootstrap form, and which Secrets authenticate them.

use base64::Engine;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::*;

const TOKEN: &str = "abcdef.0123456789abcdef";

fn b64(s: &str) -> Value {
    json!(base64::engine::general_purpose::STANDARD.encode(s))
}

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2030-01-01T00:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

/// A valid token Secret for [`TOKEN`], expiring in 2030 an hour after [`now`].
fn secret() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "bootstrap.kubernetes.io/token",
        "metadata": {"name": "bootstrap-token-abcdef", "namespace": "flotilla-system"},
        "data": {
            "token-id": b64("abcdef"),
            "token-secret": b64("0123456789abcdef"),
            "usage-bootstrap-authentication": b64("true"),
            "expiration": b64("2030-01-01T01:00:00Z"),
        },
    })
}

fn with(path: &str, value: Value) -> Value {
    let mut s = secret();
    let (parent, key) = path.rsplit_once('/').unwrap();
    s.pointer_mut(parent).unwrap()[key] = value;
    s
}

fn without(key: &str) -> Value {
    let mut s = secret();
    s["data"].as_object_mut().unwrap().remove(key);
    s
}

#[test]
fn only_kubeadm_shaped_tokens_are_bootstrap_tokens() {
    let cases: &[(&str, Option<&str>)] = &[
        ("abcdef.0123456789abcdef", Some("abcdef")),
        ("a1b2c3.zzzzzzzzzzzzzzzz", Some("a1b2c3")),
        ("ABCDEF.0123456789abcdef", None),
        ("abcde.0123456789abcdef", None),
        ("abcdefg.0123456789abcdef", None),
        ("abcdef.0123456789abcde", None),
        ("abcdef.0123456789abcdef0", None),
        ("abcdef:0123456789abcdef", None),
        ("abcdef.0123456789abcde-", None),
        ("abcdef.0123456789.abcdef", None),
        ("eyJhbGciOi.eyJpc3Mi.c2lnbmF0dXJl", None),
        ("", None),
    ];
    for (token, id) in cases {
        assert_eq!(
            BootstrapToken::parse(token).map(|t| t.id()),
            *id,
            "{token:?}"
        );
    }
}

#[test]
fn debug_output_never_shows_the_secret() {
    let t = BootstrapToken::parse(TOKEN).unwrap();
    let shown = format!("{t:?}");
    assert!(
        shown.contains("abcdef") && !shown.contains("0123456789abcdef"),
        "{shown}"
    );
}

#[test]
fn a_valid_secret_authenticates_as_the_bootstrap_user() {
    let user = BootstrapToken::parse(TOKEN)
        .unwrap()
        .verify(&secret(), now())
        .unwrap();
    assert_eq!(user.name, "system:bootstrap:abcdef");
    assert_eq!(
        user.groups,
        [
            "system:bootstrappers",
            "system:bootstrappers:flotilla",
            "system:authenticated"
        ]
    );
    assert!(!user.is_privileged());
    assert_eq!(token_id(&user.name), Some("abcdef"));
}

#[test]
fn secrets_that_do_not_authenticate() {
    use BootstrapTokenError as E;
    let cases: Vec<(&str, &str, Value, E)> = vec![
        (
            "wrong secret",
            "abcdef.0123456789abcdee",
            secret(),
            E::SecretMismatch,
        ),
        (
            "expired",
            TOKEN,
            with("/data/expiration", b64("2029-12-31T23:59:59Z")),
            E::Expired("2029-12-31T23:59:59Z".into()),
        ),
        (
            "expires exactly now",
            TOKEN,
            with("/data/expiration", b64("2030-01-01T00:00:00Z")),
            E::Expired("2030-01-01T00:00:00Z".into()),
        ),
        (
            "expiration not RFC 3339",
            TOKEN,
            with("/data/expiration", b64("tomorrow")),
            E::BadExpiration("tomorrow".into()),
        ),
        (
            "wrong type",
            TOKEN,
            with("/type", json!("Opaque")),
            E::WrongType("Opaque".into()),
        ),
        (
            "no type",
            TOKEN,
            {
                let mut s = secret();
                s.as_object_mut().unwrap().remove("type");
                s
            },
            E::WrongType(String::new()),
        ),
        (
            "usage not true",
            TOKEN,
            with("/data/usage-bootstrap-authentication", b64("false")),
            E::NotForAuthentication,
        ),
        (
            "usage absent",
            TOKEN,
            without("usage-bootstrap-authentication"),
            E::NotForAuthentication,
        ),
        (
            "token-id absent",
            TOKEN,
            without("token-id"),
            E::MissingKey("token-id"),
        ),
        (
            "token-secret absent",
            TOKEN,
            without("token-secret"),
            E::MissingKey("token-secret"),
        ),
        (
            "no data at all",
            TOKEN,
            {
                let mut s = secret();
                s.as_object_mut().unwrap().remove("data");
                s
            },
            E::MissingKey("token-id"),
        ),
        (
            "token-id names another token",
            TOKEN,
            with("/data/token-id", b64("zzzzzz")),
            E::IdMismatch,
        ),
        (
            "token-secret not base64",
            TOKEN,
            with("/data/token-secret", json!("!!not base64!!")),
            E::BadEncoding("token-secret"),
        ),
        (
            "token-id not a string",
            TOKEN,
            with("/data/token-id", json!(42)),
            E::BadEncoding("token-id"),
        ),
        (
            "being deleted",
            TOKEN,
            with("/metadata/deletionTimestamp", json!("2029-12-31T00:00:00Z")),
            E::Terminating,
        ),
    ];
    for (what, token, secret, want) in cases {
        let t = BootstrapToken::parse(token).unwrap();
        assert_eq!(t.verify(&secret, now()), Err(want), "{what}");
    }
}

#[test]
fn expiration_is_optional() {
    let t = BootstrapToken::parse(TOKEN).unwrap();
    assert!(t.verify(&without("expiration"), now()).is_ok());
}

#[test]
fn tokens_may_be_pinned_to_one_cluster() {
    assert_eq!(pinned_cluster(&secret()), Ok(None));
    assert_eq!(
        pinned_cluster(&with("/data/flotilla-cluster", b64("m3"))),
        Ok(Some("m3".to_string()))
    );
    assert_eq!(
        pinned_cluster(&with("/data/flotilla-cluster", json!("%%"))),
        Err(BootstrapTokenError::BadEncoding("flotilla-cluster"))
    );
}

#[test]
fn names_follow_kubeadm() {
    assert_eq!(secret_name("abcdef"), "bootstrap-token-abcdef");
    assert_eq!(
        secret_key("abcdef"),
        "/registry/core/secrets/flotilla-system/bootstrap-token-abcdef"
    );
    assert_eq!(token_id("system:bootstrap:abcdef"), Some("abcdef"));
    assert_eq!(token_id("system:bootstrap:"), None);
    assert_eq!(token_id("system:serviceaccount:a:b"), None);
    assert_eq!(token_id("flotilla-admin"), None);
}
