//! PostgreSQL: TLS to the store and commits whose outcome is unknown.
//!
//! `flotilla serve --store postgres://…` honours the URL's libpq `sslmode`: with
//! `verify-full&sslrootcert=CA` the hub talks to the TLS server scripts/test starts
//! (`FLOTILLA_TEST_POSTGRES_TLS_URL`, its CA `FLOTILLA_TEST_POSTGRES_TLS_CA`) only over TLS, and
//! it refuses to start, with one message naming the server (never the password), when the
//! certificate comes from another CA or names another host, or when `sslmode=require` meets a
//! server without TLS (`FLOTILLA_TEST_POSTGRES_URL`). Commits whose outcome is lost with the
//! connection are covered where they can be cut precisely, in crates/store/tests/postgres_commit.rs.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::Hub;

/// A variable scripts/test exports, or a panic saying how to get it.
fn env(var: &str) -> String {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!(
            "{var} is not set: run scripts/test (it starts a plaintext and a TLS PostgreSQL and \
             exports it), or `source scripts/lib/postgres.sh; pg_start DIR` in this shell first"
        ),
    }
}

/// The port of a `postgres://…@host:PORT/db` URL.
fn port(url: &str) -> u16 {
    let rest = url.split("://").nth(1).expect("a URL");
    let authority = rest.split('/').next().expect("an authority");
    let hostport = authority.rsplit('@').next().expect("a host");
    hostport
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{url} names no port"))
}

/// Run SQL with psql on the server of `url` and return its unaligned output.
fn psql(url: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args([url, "-v", "ON_ERROR_STOP=1", "-XAtc", sql])
        .output()
        .expect("psql is not installed: install the postgresql-client Debian package");
    assert!(
        out.status.success(),
        "psql {sql:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A fresh database on the TLS server; its name.
fn tls_database(tag: &str) -> String {
    let db = format!("security_pg_{tag}_{}", std::process::id());
    let admin = env("FLOTILLA_TEST_POSTGRES_TLS_URL");
    psql(&admin, &format!("DROP DATABASE IF EXISTS {db}"));
    psql(&admin, &format!("CREATE DATABASE {db}"));
    db
}

/// The TLS server's URL for `db` under the name `host` (the connection still goes to
/// 127.0.0.1 through `hostaddr`; only the name the certificate must carry changes).
fn tls_store(db: &str, host: &str, query: &str) -> String {
    let port = port(&env("FLOTILLA_TEST_POSTGRES_TLS_URL"));
    format!("postgres://postgres:hunter2-pw@{host}:{port}/{db}?hostaddr=127.0.0.1&{query}")
}

fn ca() -> String {
    let ca = env("FLOTILLA_TEST_POSTGRES_TLS_CA");
    assert!(
        Path::new(&ca).exists(),
        "FLOTILLA_TEST_POSTGRES_TLS_CA names {ca}, which is missing"
    );
    ca
}

/// Run `flotilla serve --store STORE`, which must exit unsuccessfully within a minute without
/// ever serving; returns what it printed.
fn refuses_to_start(store: &str) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = Command::new(env!("CARGO_BIN_EXE_flotilla"))
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.path())
        .args(["--listen", "127.0.0.1:0", "--store", store])
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start flotilla serve");
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for flotilla serve") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "flotilla serve is still running after 60 s with --store {store}:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = child.wait_with_output().expect("output");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !status.success(),
        "flotilla serve exited successfully:\n{printed}"
    );
    assert!(
        !printed.contains("flotilla hub is serving"),
        "it served before refusing:\n{printed}"
    );
    assert!(
        !printed.contains("hunter2"),
        "the password was printed:\n{printed}"
    );
    printed
}

#[test]
fn serve_with_verify_full_stores_over_tls() {
    let db = tls_database("verify_full");
    let store = tls_store(
        &db,
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}", ca()),
    );
    let hub = Hub::start_with(&["--store", &store]);
    hub.ok(&["create", "namespace", "tls"]);
    hub.ok(&[
        "create",
        "configmap",
        "c",
        "-n",
        "tls",
        "--from-literal=k=v",
    ]);
    assert_eq!(
        hub.ok(&[
            "get",
            "configmap",
            "c",
            "-n",
            "tls",
            "-o",
            "jsonpath={.data.k}"
        ]),
        "v"
    );
    // Every connection the hub holds to its database is encrypted.
    let counts = psql(
        &env("FLOTILLA_TEST_POSTGRES_TLS_URL"),
        &format!(
            "SELECT count(*) FILTER (WHERE s.ssl) || ' ' || count(*) FILTER (WHERE NOT s.ssl) \
             FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.datname = '{db}'"
        ),
    );
    let (tls, plain) = counts.split_once(' ').expect("two counts");
    assert!(
        tls.parse::<u32>().expect("a count") >= 5 && plain == "0",
        "{tls} TLS and {plain} plaintext connections to the hub's database"
    );
    assert!(
        !hub.log().contains("hunter2"),
        "the password reached the log"
    );
}

#[test]
fn serve_with_verify_full_refuses_a_certificate_from_another_ca() {
    let db = tls_database("other_ca");
    let dir = tempfile::tempdir().expect("temp dir");
    let other = dir.path().join("other-ca.pem");
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    std::fs::write(&other, params.self_signed(&key).expect("CA").pem()).expect("write CA");
    let store = tls_store(
        &db,
        "localhost",
        &format!("sslmode=verify-full&sslrootcert={}", other.display()),
    );
    let printed = refuses_to_start(&store);
    let port = port(&store);
    assert!(
        printed.contains(&format!("connecting to PostgreSQL at localhost:{port}"))
            && printed.contains("invalid peer certificate"),
        "{printed}"
    );
}

#[test]
fn serve_with_verify_full_refuses_a_certificate_for_another_host() {
    let db = tls_database("other_host");
    let store = tls_store(
        &db,
        "db.flotilla.invalid",
        &format!("sslmode=verify-full&sslrootcert={}", ca()),
    );
    let printed = refuses_to_start(&store);
    let port = port(&store);
    assert!(
        printed.contains(&format!(
            "connecting to PostgreSQL at db.flotilla.invalid:{port}"
        )) && printed.contains("not valid for name"),
        "{printed}"
    );
}

#[test]
fn serve_with_a_missing_sslrootcert_refuses_naming_the_file() {
    let db = tls_database("missing_root");
    let store = tls_store(
        &db,
        "localhost",
        "sslmode=verify-full&sslrootcert=/nonexistent/ca.pem",
    );
    let printed = refuses_to_start(&store);
    assert!(
        printed.contains("TLS to PostgreSQL at localhost:")
            && printed.contains("sslrootcert /nonexistent/ca.pem cannot be read"),
        "{printed}"
    );
}

#[test]
fn serve_with_require_refuses_a_server_without_tls() {
    let plain = env("FLOTILLA_TEST_POSTGRES_URL");
    let port = port(&plain);
    let store = format!("postgres://postgres:hunter2-pw@127.0.0.1:{port}/flotilla?sslmode=require");
    let printed = refuses_to_start(&store);
    assert!(
        printed.contains(&format!("connecting to PostgreSQL at 127.0.0.1:{port}"))
            && printed.contains("server does not support TLS"),
        "{printed}"
    );
}
