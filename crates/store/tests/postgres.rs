//! The conformance suite against the PostgreSQL backend.
//!
//! Needs a server: `FLOTILLA_TEST_POSTGRES_URL` names a database whose user may create
//! databases (scripts/test starts one and sets it). Every case gets a database of its own,
//! created here and dropped at the end, so runs never see each other's rows.

mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use support::with_database;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_conformance() {
    support::init_tracing();
    let url = support::env(support::PLAIN);
    let client = support::admin(&url).await;
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
