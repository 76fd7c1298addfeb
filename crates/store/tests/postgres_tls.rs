//! TLS to PostgreSQL as the URL's libpq `sslmode` says, against the real servers scripts/test
//! starts: `FLOTILLA_TEST_POSTGRES_TLS_URL` (TLS, certificate for localhost/127.0.0.1 signed by
//! `FLOTILLA_TEST_POSTGRES_TLS_CA`; the role flotilla_cert logs in only with
//! `FLOTILLA_TEST_POSTGRES_TLS_CLIENT_CERT`/`_KEY`) and `FLOTILLA_TEST_POSTGRES_URL` (no TLS).

mod support;

use std::path::Path;

use bytes::Bytes;
use flotilla_store::{Error, Store};
use support::{chain, env, Database};

/// The TLS server's URL for `db` with `query`, its host replaced by `host` (the connection
/// still goes to 127.0.0.1, through `hostaddr`, so only the name the certificate must match
/// changes).
fn tls_url(db: &Database, host: &str, query: &str) -> String {
    let (_, port) = support::address(&env(support::TLS));
    format!(
        "postgres://postgres@{host}:{port}/{}?hostaddr=127.0.0.1&{query}",
        db.name
    )
}

fn ca() -> String {
    let ca = env(support::TLS_CA);
    assert!(
        Path::new(&ca).exists(),
        "{} names {ca}, which is missing",
        support::TLS_CA
    );
    ca
}

async fn tls_database(tag: &str) -> Database {
    support::init_tracing();
    Database::create(&env(support::TLS), tag, None).await
}

/// Open, write and read back a key, close.
async fn works(url: &str) {
    let store = Store::open(url)
        .await
        .unwrap_or_else(|e| panic!("opening {}: {}", flotilla_store::redact_url(url), chain(&e)));
    // A key of its own: several calls may share a database.
    let key = format!("/k/{}", store.revision() + 1);
    store
        .create(&key, Box::new(|_| Bytes::from_static(b"v")))
        .await
        .expect("write over the connection");
    assert!(store.get(&key).await.expect("read").is_some());
    store.close().await;
}

/// Open must fail connecting; returns the host the error names and its whole message.
async fn refused(url: &str) -> (String, String) {
    match Store::open(url).await {
        Ok(store) => {
            store.close().await;
            panic!("{} connected", flotilla_store::redact_url(url))
        }
        Err(e @ Error::ConnectPostgres { .. }) => {
            let Error::ConnectPostgres { host, .. } = &e else {
                unreachable!()
            };
            (host.clone(), chain(&e))
        }
        Err(e) => panic!("expected a connection error, got {}", chain(&e)),
    }
}

#[tokio::test]
async fn verify_full_connects_over_tls_with_the_right_ca_and_name() {
    let db = tls_database("verify_full").await;
    let ca = ca();
    for host in ["localhost", "127.0.0.1"] {
        let url = tls_url(&db, host, &format!("sslmode=verify-full&sslrootcert={ca}"));
        let store = Store::open(&url)
            .await
            .unwrap_or_else(|e| panic!("{host}: {}", chain(&e)));
        let (tls, plain) = db.tls_connections().await;
        assert!(
            tls >= 5 && plain == 0,
            "{host}: {tls} TLS and {plain} plaintext connections"
        );
        store.close().await;
    }
    db.drop_now().await;
}

#[tokio::test]
async fn verify_full_refuses_a_certificate_for_another_name() {
    let db = tls_database("wrong_name").await;
    let url = tls_url(
        &db,
        "db.flotilla.invalid",
        &format!("sslmode=verify-full&sslrootcert={}", ca()),
    );
    let (host, msg) = refused(&url).await;
    assert!(host.starts_with("db.flotilla.invalid:"), "{host}");
    assert!(msg.contains("not valid for name"), "{msg}");
    // verify-ca checks the chain only, as libpq's does.
    works(&tls_url(
        &db,
        "db.flotilla.invalid",
        &format!("sslmode=verify-ca&sslrootcert={}", ca()),
    ))
    .await;
    db.drop_now().await;
}

#[tokio::test]
async fn verify_full_and_verify_ca_refuse_a_certificate_from_another_ca() {
    let db = tls_database("wrong_ca").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let other = dir.path().join("other-ca.pem");
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    std::fs::write(&other, params.self_signed(&key).expect("CA").pem()).expect("write CA");
    for mode in ["verify-full", "verify-ca", "require"] {
        let url = tls_url(
            &db,
            "localhost",
            &format!("sslmode={mode}&sslrootcert={}", other.display()),
        );
        let (host, msg) = refused(&url).await;
        assert!(host.starts_with("localhost:"), "{mode}: {host}");
        assert!(msg.contains("UnknownIssuer"), "{mode}: {msg}");
    }
    db.drop_now().await;
}

#[tokio::test]
async fn a_bad_sslrootcert_fails_at_open_naming_the_server_and_the_file() {
    let db = tls_database("bad_root").await;
    let dir = tempfile::tempdir().expect("temp dir");
    let not_pem = dir.path().join("not-a-cert.pem");
    std::fs::write(&not_pem, "hello").expect("write");
    let missing = dir.path().join("missing.pem");
    for (path, want) in [
        (&missing, "cannot be read"),
        (&not_pem, "holds no certificate"),
    ] {
        let url = tls_url(
            &db,
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={}", path.display()),
        );
        match Store::open(&url).await {
            Err(Error::PostgresTls { host, what, .. }) => {
                assert!(host.starts_with("localhost:"), "{host}");
                assert!(
                    what.contains(&path.display().to_string()) && what.contains(want),
                    "{what}"
                );
            }
            Err(e) => panic!("expected a TLS settings error, got {}", chain(&e)),
            Ok(_) => panic!("opened with sslrootcert {}", path.display()),
        }
    }
    db.drop_now().await;
}

#[tokio::test]
async fn require_refuses_a_server_without_tls_and_never_echoes_the_password() {
    support::init_tracing();
    let plain = env(support::PLAIN);
    let (_, port) = support::address(&plain);
    for query in [
        "sslmode=require",
        "sslmode=verify-full",
        &format!("sslmode=verify-ca&sslrootcert={}", ca()),
    ] {
        let url = format!("postgres://postgres:hunter2-pw@127.0.0.1:{port}/flotilla?{query}");
        let (host, msg) = refused(&url).await;
        assert_eq!(host, format!("127.0.0.1:{port}"));
        assert!(msg.contains("does not support TLS"), "{query}: {msg}");
        assert!(!msg.contains("hunter2"), "{query}: {msg}");
    }
}

#[tokio::test]
async fn prefer_and_require_encrypt_without_verifying_and_prefer_falls_back() {
    let db = tls_database("prefer").await;
    for query in ["sslmode=require", "sslmode=prefer", ""] {
        // A name the certificate does not carry: nothing is verified in these modes.
        let url = tls_url(&db, "db.flotilla.invalid", query);
        let store = Store::open(&url)
            .await
            .unwrap_or_else(|e| panic!("{query}: {}", chain(&e)));
        let (tls, plain) = db.tls_connections().await;
        assert!(
            tls >= 5 && plain == 0,
            "{query}: {tls} TLS and {plain} plaintext connections"
        );
        store.close().await;
    }
    db.drop_now().await;
    let plain = Database::create(&env(support::PLAIN), "prefer_plain", None).await;
    works(&format!("{}?sslmode=prefer", plain.url())).await;
    works(&format!("{}?sslmode=disable", plain.url())).await;
    plain.drop_now().await;
}

#[tokio::test]
async fn a_client_certificate_logs_in_the_role_it_names() {
    support::init_tracing();
    let server = env(support::TLS);
    let db = Database::create(&server, "client_cert", Some(support::CERT_ROLE)).await;
    let (_, port) = support::address(&server);
    let base = format!(
        "postgres://{}@localhost:{port}/{}?sslmode=verify-full&sslrootcert={}",
        support::CERT_ROLE,
        db.name,
        ca()
    );
    works(&format!(
        "{base}&sslcert={}&sslkey={}",
        env(support::TLS_CLIENT_CERT),
        env(support::TLS_CLIENT_KEY)
    ))
    .await;
    // Without it the server's pg_hba (cert auth for this role) turns the connection away.
    let (_, msg) = refused(&base).await;
    assert!(msg.contains("certificate"), "{msg}");
    db.drop_now().await;
}
