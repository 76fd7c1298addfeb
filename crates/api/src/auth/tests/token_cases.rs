use base64::Engine;
use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Value};

use crate::auth::token::{
    bearer_token, AdminToken, BearerToken, Binding, ObjectRef, TokenAuthority, TokenError,
    TokenRequest, TokenSigner, VerificationKey,
};

const ISSUER: &str = "https://hub.example:6443";

fn t0() -> DateTime<Utc> {
    DateTime::from_timestamp(1_700_000_000, 0).unwrap()
}

fn authority() -> TokenAuthority {
    TokenAuthority::new(ISSUER, TokenSigner::generate().unwrap())
}

fn request() -> TokenRequest {
    TokenRequest {
        namespace: "ns1".into(),
        service_account: ObjectRef {
            name: "builder".into(),
            uid: "sa-uid".into(),
        },
        ..Default::default()
    }
}

fn b64url(v: &Value) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string())
}

/// Replace the payload of a signed token, keeping header and signature.
fn with_payload(token: &str, edit: impl FnOnce(&mut Value)) -> String {
    let parts: Vec<&str> = token.split('.').collect();
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(parts[1])
        .unwrap();
    let mut payload: Value = serde_json::from_slice(&raw).unwrap();
    edit(&mut payload);
    format!("{}.{}.{}", parts[0], b64url(&payload), parts[2])
}

/// One token, many clocks and verifiers: what is accepted and what error the rest get.
#[test]
fn verification_table() {
    let auth = authority();
    let issued = auth.issue(&request(), t0()).unwrap();
    let good = issued.token.expose().to_string();
    let other_key = TokenAuthority::new(ISSUER, TokenSigner::generate().unwrap());
    let forged = other_key
        .issue(&request(), t0())
        .unwrap()
        .token
        .into_inner();
    let foreign = TokenAuthority::new("https://elsewhere", TokenSigner::generate().unwrap())
        .issue(&request(), t0())
        .unwrap()
        .token
        .into_inner();
    let parts: Vec<&str> = good.split('.').collect();
    let alg_none = format!("{}.{}.", b64url(&json!({"alg": "none"})), parts[1]);
    let payload = serde_json::to_value(&issued.claims).unwrap();
    let signed = |header: Value| auth.sign_with_header(&header, &payload).unwrap();
    let alg_hs = signed(json!({"alg": "HS256"}));
    let crit = signed(json!({"alg": "ES256", "crit": ["exp"], "exp": 1}));
    let bad_kid = signed(json!({"alg": "ES256", "kid": "nope"}));
    let no_kid = signed(json!({"alg": "ES256"}));
    let with_typ =
        signed(json!({"alg": "ES256", "typ": "JWT", "kid": auth.jwks()["keys"][0]["kid"]}));
    // The signature of a token verified before (remembered), with one byte changed.
    let bad_signature = {
        let (head, signature) = good.rsplit_once('.').unwrap();
        let mut sig = signature.as_bytes().to_vec();
        sig[10] = if sig[10] == b'A' { b'B' } else { b'A' };
        format!("{head}.{}", String::from_utf8(sig).unwrap())
    };
    let tampered = with_payload(&good, |p| {
        p["kubernetes.io"]["namespace"] = json!("kube-system")
    });
    let wrong_sub = auth
        .sign_payload(&with_claims(&issued.claims, |c| {
            c["sub"] = json!("system:serviceaccount:x:y")
        }))
        .unwrap();
    let no_sa = auth
        .sign_payload(&with_claims(&issued.claims, |c| {
            c["kubernetes.io"]["serviceaccount"]["name"] = json!("")
        }))
        .unwrap();
    let string_aud = auth
        .sign_payload(&with_claims(&issued.claims, |c| c["aud"] = json!(ISSUER)))
        .unwrap();

    let secs = |s: i64| t0() + Duration::seconds(s);
    let aud = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    type Case<'a> = (
        &'a str,
        &'a str,
        Vec<String>,
        DateTime<Utc>,
        Result<(), TokenError>,
    );
    let cases: Vec<Case> = vec![
        ("fresh token", &good, vec![], t0(), Ok(())),
        ("just before exp", &good, vec![], secs(3599), Ok(())),
        ("past exp within leeway", &good, vec![], secs(3600 + 60), Ok(())),
        ("expired", &good, vec![], secs(3600 + 61), Err(TokenError::Expired)),
        ("nbf within leeway", &good, vec![], secs(-60), Ok(())),
        ("before nbf", &good, vec![], secs(-61), Err(TokenError::NotYetValid)),
        ("explicit matching audience", &good, aud(&["api", ISSUER]), t0(), Ok(())),
        (
            "wrong audience",
            &good,
            aud(&["vault"]),
            t0(),
            Err(TokenError::Audience { token: aud(&[ISSUER]), accepted: aud(&["vault"]) }),
        ),
        ("aud as a single string", &string_aud, vec![], t0(), Ok(())),
        ("signed by another key", &forged, vec![], t0(), Err(TokenError::Signature)),
        ("signature changed after one verified", &bad_signature, vec![], t0(), Err(TokenError::Signature)),
        ("tampered payload", &tampered, vec![], t0(), Err(TokenError::Signature)),
        ("unknown kid", &bad_kid, vec![], t0(), Err(TokenError::Signature)),
        ("no kid tries every key", &no_kid, vec![], t0(), Ok(())),
        ("typ header is fine", &with_typ, vec![], t0(), Ok(())),
        ("alg none", &alg_none, vec![], t0(), Err(TokenError::Algorithm("none".into()))),
        ("alg HS256", &alg_hs, vec![], t0(), Err(TokenError::Algorithm("HS256".into()))),
        ("crit header", &crit, vec![], t0(), Err(TokenError::Malformed("the header has critical extensions"))),
        ("other issuer", &foreign, vec![], t0(), Err(TokenError::ForeignIssuer)),
        ("two parts", "a.b", vec![], t0(), Err(TokenError::Malformed("expected three dot-separated parts"))),
        ("not base64", "a.b.c", vec![], t0(), Err(TokenError::Malformed("the header is not base64url JSON object"))),
        (
            "sub disagrees with private claims",
            &wrong_sub,
            vec![],
            t0(),
            Err(TokenError::Claims("sub \"system:serviceaccount:x:y\" does not name \"system:serviceaccount:ns1:builder\"".into())),
        ),
        (
            "no service account name",
            &no_sa,
            vec![],
            t0(),
            Err(TokenError::Claims("namespace and service account name are required".into())),
        ),
    ];
    for (what, token, audiences, now, want) in cases {
        let got = auth.verify(token, &audiences, now).map(|_| ());
        assert_eq!(got, want, "{what}");
    }
}

fn with_claims(
    claims: &crate::auth::token::ServiceAccountClaims,
    edit: impl FnOnce(&mut Value),
) -> Value {
    let mut v = serde_json::to_value(claims).unwrap();
    edit(&mut v);
    v
}

#[test]
fn issues_kubernetes_shaped_claims() {
    let auth = authority();
    let issued = auth.issue(&request(), t0()).unwrap();
    let c = &issued.claims;
    assert_eq!(c.subject, "system:serviceaccount:ns1:builder");
    assert_eq!(c.audiences, vec![ISSUER.to_string()]);
    assert_eq!(
        (c.issued_at, c.not_before, c.expires_at),
        (1_700_000_000, 1_700_000_000, 1_700_003_600)
    );
    assert_eq!(c.id.len(), 36, "jti is a UUID");
    assert_eq!(
        issued.status(),
        json!({"token": issued.token.expose(), "expirationTimestamp": "2023-11-14T23:13:20Z"})
    );
    // The payload has exactly Kubernetes' claim names.
    let payload = with_payload(issued.token.expose(), |p| {
        let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "aud",
                "exp",
                "iat",
                "iss",
                "jti",
                "kubernetes.io",
                "nbf",
                "sub"
            ]
        );
        assert_eq!(
            p["kubernetes.io"],
            json!({"namespace": "ns1", "serviceaccount": {"name": "builder", "uid": "sa-uid"}})
        );
    });
    assert!(!payload.is_empty());
    let user = auth
        .verify(issued.token.expose(), &[], t0())
        .unwrap()
        .user_info();
    assert_eq!(user.name, "system:serviceaccount:ns1:builder");
    assert_eq!(user.uid, "sa-uid");
    assert_eq!(
        user.groups,
        [
            "system:serviceaccounts",
            "system:serviceaccounts:ns1",
            "system:authenticated"
        ]
    );
    assert_eq!(
        user.extra["authentication.kubernetes.io/credential-id"],
        [format!("JTI={}", c.id)]
    );
}

/// Requested expiry → granted lifetime or the validation error.
#[test]
fn expiration_rules() {
    let capped = authority().with_max_expiration(7200);
    let uncapped = authority();
    let cases: &[(&TokenAuthority, Option<i64>, Result<i64, &str>)] = &[
        (&uncapped, None, Ok(3600)),
        (&uncapped, Some(600), Ok(600)),
        (&uncapped, Some(599), Err("spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 10 minutes")),
        (&uncapped, Some(86_400 * 365), Ok(86_400 * 365)),
        (&uncapped, Some((1 << 32) + 1), Err("spec.expirationSeconds: Invalid value: 4294967297: may not specify a duration larger than 2^32 seconds")),
        (&capped, Some(86_400), Ok(7200)),
        (&capped, None, Ok(3600)),
    ];
    for (auth, requested, want) in cases {
        let req = TokenRequest {
            expiration_seconds: *requested,
            ..request()
        };
        let got = auth
            .issue(&req, t0())
            .map(|t| t.claims.expires_at - t.claims.issued_at)
            .map_err(|e| e.to_string());
        assert_eq!(
            got.as_ref().map_err(String::as_str),
            want.as_ref().map_err(|s| *s),
            "{requested:?}"
        );
    }
}

#[test]
fn bound_tokens_and_audiences() {
    let auth = authority().with_audiences(vec!["api".into(), ISSUER.into()]);
    let req = TokenRequest {
        audiences: vec!["vault".into()],
        binding: Some(Binding::Pod {
            pod: ObjectRef {
                name: "web-0".into(),
                uid: "pod-uid".into(),
            },
            node: Some(ObjectRef {
                name: "n1".into(),
                uid: "".into(),
            }),
        }),
        ..request()
    };
    let issued = auth.issue(&req, t0()).unwrap();
    assert!(matches!(
        auth.verify(issued.token.expose(), &[], t0()),
        Err(TokenError::Audience { .. })
    ));
    let claims = auth
        .verify(issued.token.expose(), &["vault".into()], t0())
        .unwrap();
    let user = claims.user_info();
    assert_eq!(
        user.extra["authentication.kubernetes.io/pod-name"],
        ["web-0"]
    );
    assert_eq!(
        user.extra["authentication.kubernetes.io/pod-uid"],
        ["pod-uid"]
    );
    assert_eq!(user.extra["authentication.kubernetes.io/node-name"], ["n1"]);
    assert!(!user
        .extra
        .contains_key("authentication.kubernetes.io/node-uid"));
    let default_aud = auth.issue(&request(), t0()).unwrap();
    assert_eq!(default_aud.claims.audiences, ["api", ISSUER]);
    let secret = TokenRequest {
        binding: Some(Binding::Secret(ObjectRef {
            name: "s".into(),
            uid: "su".into(),
        })),
        ..request()
    };
    let claims = auth.issue(&secret, t0()).unwrap().claims;
    assert_eq!(
        claims.kubernetes.secret.as_ref().map(|s| s.name.as_str()),
        Some("s")
    );
    assert!(TokenAuthority::issue(&auth, &TokenRequest::default(), t0()).is_err());
}

#[test]
fn keys_persist_rotate_and_publish() {
    let signer = TokenSigner::generate().unwrap();
    let pem = signer.to_pem();
    assert!(
        pem.starts_with("-----BEGIN PRIVATE KEY-----\n")
            && pem.ends_with("-----END PRIVATE KEY-----\n")
    );
    let old = TokenAuthority::new(ISSUER, signer);
    let token = old.issue(&request(), t0()).unwrap().token;
    // Reloaded from PEM: same key id, verifies what the original signed.
    let reloaded = TokenAuthority::new(ISSUER, TokenSigner::from_pem(&pem).unwrap());
    assert_eq!(reloaded.jwks(), old.jwks());
    assert!(reloaded.verify(token.expose(), &[], t0()).is_ok());
    // Rotated: the new key signs, the old key still verifies.
    let old_key = TokenSigner::from_pem(&pem)
        .unwrap()
        .verification_key()
        .clone();
    let rotated = authority().with_verification_key(old_key.clone());
    assert!(rotated.verify(token.expose(), &[], t0()).is_ok());
    assert_eq!(rotated.jwks()["keys"].as_array().unwrap().len(), 2);
    // The JWK round-trips and carries Kubernetes' fields.
    let jwk = old_key.to_jwk();
    assert_eq!(
        (
            jwk["kty"].as_str(),
            jwk["crv"].as_str(),
            jwk["alg"].as_str(),
            jwk["use"].as_str()
        ),
        (Some("EC"), Some("P-256"), Some("ES256"), Some("sig"))
    );
    assert_eq!(VerificationKey::from_jwk(&jwk).unwrap(), old_key);
    assert!(VerificationKey::from_jwk(&json!({"kty": "RSA"})).is_err());
    assert_eq!(
        old.openid_configuration(None),
        json!({
            "issuer": ISSUER,
            "jwks_uri": format!("{ISSUER}/openid/v1/jwks"),
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
        })
    );
}

#[test]
fn bad_key_files_are_explained() {
    let cases: &[(&str, &str)] = &[
        ("", "no \"-----BEGIN PRIVATE KEY-----\" line"),
        (
            "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n",
            "found an SEC1 \"EC PRIVATE KEY\"",
        ),
        (
            "-----BEGIN PRIVATE KEY-----\nAAAA\n",
            "no \"-----END PRIVATE KEY-----\" line",
        ),
        (
            "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n",
            "the PEM body is not base64",
        ),
        (
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            "InvalidEncoding",
        ),
    ];
    for (pem, want) in cases {
        let err = TokenSigner::from_pem(pem).unwrap_err().to_string();
        assert!(err.contains(want), "{pem:?}: {err}");
        assert!(err.contains("remove the file"), "{err}");
    }
}

#[test]
fn secrets_are_redacted_in_debug_output() {
    let auth = authority();
    let issued = auth.issue(&request(), t0()).unwrap();
    let signer = TokenSigner::generate().unwrap();
    let pem_body = signer.to_pem().lines().nth(1).unwrap().to_string();
    let admin = AdminToken::new("s3cret-admin-token");
    let debug = format!(
        "{issued:?} {signer:?} {admin:?} {auth:?} {:?}",
        BearerToken::new("abc.def.ghi")
    );
    for secret in [
        issued.token.expose(),
        &pem_body,
        "s3cret-admin-token",
        "abc.def.ghi",
    ] {
        assert!(
            !debug.contains(secret),
            "Debug output leaks {secret:?}: {debug}"
        );
    }
    assert!(debug.contains("<redacted>"));
}

#[test]
fn admin_token_and_bearer_header() {
    let admin = AdminToken::new("correct horse");
    let cases: &[(&str, bool)] = &[
        ("correct horse", true),
        ("correct hors", false),
        ("correct horse ", false),
        ("", false),
        ("CORRECT HORSE", false),
    ];
    for (presented, want) in cases {
        assert_eq!(admin.matches(presented), *want, "{presented:?}");
    }
    assert!(
        !AdminToken::new("").matches(""),
        "an empty admin token matches nothing"
    );
    let headers: &[(&str, Option<&str>)] = &[
        ("Bearer abc", Some("abc")),
        ("bearer abc", Some("abc")),
        ("  BEARER abc  ", Some("abc")),
        ("Bearer abc def", Some("abc")),
        ("Bearer ", None),
        ("Bearer", None),
        ("Basic YWJj", None),
        ("", None),
    ];
    for (header, want) in headers {
        assert_eq!(bearer_token(header), *want, "{header:?}");
    }
    let generated = BearerToken::generate().unwrap();
    assert_eq!(generated.expose().len(), 43);
    assert_ne!(generated, BearerToken::generate().unwrap());
}
