use super::*;
use k8s_openapi::ByteString;

fn token(expiration: Option<&str>, type_: &str) -> Secret {
    let mut data = std::collections::BTreeMap::new();
    if let Some(e) = expiration {
        data.insert("expiration".to_owned(), ByteString(e.as_bytes().to_vec()));
    }
    Secret {
        type_: Some(type_.to_owned()),
        data: Some(data),
        ..Secret::default()
    }
}

#[test]
fn only_expired_bootstrap_tokens_go() {
    let now: Timestamp = "2026-11-23T12:00:00Z".parse().unwrap();
    for (secret, want) in [
        (
            token(Some("2026-11-23T11:59:59Z"), BOOTSTRAP_TOKEN_TYPE),
            true,
        ),
        (
            token(Some("2026-11-23T12:00:00Z"), BOOTSTRAP_TOKEN_TYPE),
            true,
        ),
        (
            token(Some("2026-11-23T13:00:00Z"), BOOTSTRAP_TOKEN_TYPE),
            false,
        ),
        (token(None, BOOTSTRAP_TOKEN_TYPE), false),
        (token(Some("garbage"), BOOTSTRAP_TOKEN_TYPE), false),
        (token(Some("2020-01-01T00:00:00Z"), "Opaque"), false),
    ] {
        assert_eq!(expired(&secret, now), want, "{secret:?}");
    }
}
