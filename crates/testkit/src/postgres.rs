//! Databases of their own for tests on the PostgreSQL that scripts/test starts
//! (`FLOTILLA_TEST_POSTGRES_URL`), made with `psql`.

use std::process::Command;

/// The variable scripts/test sets to its PostgreSQL server's URL.
pub const SERVER_VAR: &str = "FLOTILLA_TEST_POSTGRES_URL";

/// The test server's URL, if scripts/test (or the caller) set it.
pub fn server() -> Option<String> {
    std::env::var(SERVER_VAR).ok().filter(|u| !u.is_empty())
}

/// The test server's URL, or a panic saying how to get one.
pub fn required_server() -> String {
    server().unwrap_or_else(|| {
        panic!(
            "{SERVER_VAR} is not set: run scripts/test, which starts PostgreSQL on 127.0.0.1 \
             and sets it"
        )
    })
}

/// Create the database `<prefix>_<pid>` on the server of `url`; `url` pointing at it.
pub fn create_database(url: &str, prefix: &str) -> String {
    let db = format!("{prefix}_{}", std::process::id());
    let out = Command::new("psql")
        .arg(url)
        .args([
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            &format!("CREATE DATABASE {db}"),
        ])
        .output()
        .expect("psql is not installed: install the postgresql-client Debian package");
    assert!(
        out.status.success(),
        "CREATE DATABASE {db} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let base = url.rsplit_once('/').map(|(b, _)| b).unwrap_or(url);
    format!("{base}/{db}")
}
