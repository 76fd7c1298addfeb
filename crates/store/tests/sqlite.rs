//! The conformance suite against the SQLite backend, one file per case in a temporary
//! directory.

use std::sync::atomic::{AtomicUsize, Ordering};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_conformance() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "flotilla_store=info".into()))
        .with_test_writer()
        .try_init();
    let dir = tempfile::tempdir().expect("temporary directory");
    let n = AtomicUsize::new(0);
    flotilla_store::conformance::run_all(|| {
        let path = dir
            .path()
            .join(format!("store-{}.db", n.fetch_add(1, Ordering::SeqCst)));
        async move { format!("sqlite:{}", path.display()) }
    })
    .await;
}

#[tokio::test]
async fn sqlite_open_errors_name_the_step() {
    let err = flotilla_store::Store::open("sqlite:/nonexistent-dir/x/store.db")
        .await
        .expect_err("a missing directory cannot hold a database");
    assert!(
        matches!(err, flotilla_store::Error::OpenSqlite { .. }),
        "{err:?}"
    );
    let err = flotilla_store::Store::open("mysql://u:secret@h/db")
        .await
        .expect_err("unsupported");
    assert!(
        matches!(err, flotilla_store::Error::ParseUrl { .. }),
        "{err:?}"
    );
    assert!(
        !err.to_string().contains("secret"),
        "the password is not echoed: {err}"
    );
}
