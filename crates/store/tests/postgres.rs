//! The conformance suite against the PostgreSQL backend.
//!
//! Needs a server: `FLOTILLA_TEST_POSTGRES_URL` names a database whose user may create
//! databases (scripts/test starts one and sets it). Every case gets a database of its own,
//! created here and dropped at the end, so runs never see each other's rows.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const VAR: &str = "FLOTILLA_TEST_POSTGRES_URL";

fn admin_url() -> String {
    match std::env::var(VAR) {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "{VAR} is not set: run scripts/test (it starts PostgreSQL on 127.0.0.1 and sets it), \
             or set it to postgres://USER@HOST:PORT/DB for a user that may CREATE DATABASE"
        ),
    }
}

/// `url` with its database name replaced by `db`.
fn with_database(url: &str, db: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let base = match base[after_scheme..].find('/') {
        Some(slash) => &base[..after_scheme + slash],
        None => base,
    };
    format!("{base}/{db}{query}")
}

async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("connecting to {VAR}: {e}; is the server running?"));
    tokio::spawn(conn);
    client
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_conformance() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "flotilla_store=info".into()))
        .with_test_writer()
        .try_init();
    let url = admin_url();
    let client = admin(&url).await;
    let run = format!(
        "flotilla_test_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros())
            .unwrap_or_default()
    );
    let n = AtomicUsize::new(0);
    let created = Mutex::new(Vec::new());
    flotilla_store::conformance::run_all(|| {
        let db = format!("{run}_{}", n.fetch_add(1, Ordering::SeqCst));
        created.lock().unwrap().push(db.clone());
        let (client, url) = (&client, &url);
        async move {
            client
                .batch_execute(&format!("CREATE DATABASE {db}"))
                .await
                .unwrap_or_else(|e| panic!("CREATE DATABASE {db}: {e}"));
            with_database(url, &db)
        }
    })
    .await;
    for db in created.into_inner().unwrap() {
        if let Err(e) = client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {db}"))
            .await
        {
            eprintln!("dropping test database {db}: {e}");
        }
    }
}

#[test]
fn database_names_are_replaced() {
    let cases = [
        ("postgres://u@h:5/db", "postgres://u@h:5/x"),
        (
            "postgres://u:p@h/db?sslmode=disable",
            "postgres://u:p@h/x?sslmode=disable",
        ),
        ("postgres://u@h:5", "postgres://u@h:5/x"),
    ];
    for (url, want) in cases {
        assert_eq!(with_database(url, "x"), want);
    }
}
