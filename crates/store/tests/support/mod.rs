//! What the PostgreSQL test files share: the servers scripts/test starts (read from the
//! environment; a missing one fails the test saying how to get it), a fresh database per
//! test, and error-chain rendering.
#![allow(dead_code)]

pub mod proxy;

use std::str::FromStr;

/// The plaintext server (no TLS).
pub const PLAIN: &str = "FLOTILLA_TEST_POSTGRES_URL";
/// The TLS server, and the CA and client certificate that go with it.
pub const TLS: &str = "FLOTILLA_TEST_POSTGRES_TLS_URL";
pub const TLS_CA: &str = "FLOTILLA_TEST_POSTGRES_TLS_CA";
pub const TLS_CLIENT_CERT: &str = "FLOTILLA_TEST_POSTGRES_TLS_CLIENT_CERT";
pub const TLS_CLIENT_KEY: &str = "FLOTILLA_TEST_POSTGRES_TLS_CLIENT_KEY";
/// The role that logs in to the TLS server with the client certificate only.
pub const CERT_ROLE: &str = "flotilla_cert";

/// A variable scripts/lib/postgres.sh exports, or a panic saying how to get it.
pub fn env(var: &str) -> String {
    match std::env::var(var) {
        Ok(v) if !v.is_empty() => v,
        _ => panic!(
            "{var} is not set: run scripts/test (it installs PostgreSQL and openssl if absent, \
             starts a plaintext and a TLS PostgreSQL on 127.0.0.1 and exports it), or run \
             `source scripts/lib/postgres.sh; pg_start DIR` in this shell first"
        ),
    }
}

/// `url` with its database name replaced by `db`.
pub fn with_database(url: &str, db: &str) -> String {
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

/// `host:port` of a server URL.
pub fn address(url: &str) -> (String, u16) {
    let config = tokio_postgres::Config::from_str(url).expect("a postgres:// URL");
    let host = match config.get_hosts().first() {
        Some(tokio_postgres::config::Host::Tcp(h)) => h.clone(),
        other => panic!("{url}: expected a TCP host, got {other:?}"),
    };
    (host, config.get_ports().first().copied().unwrap_or(5432))
}

/// A plaintext admin connection (trust auth as `postgres`).
pub async fn admin(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}; is the server running?"));
    tokio::spawn(conn);
    client
}

/// A database of its own on the server of `server_url`, dropped by [`Database::drop_now`].
pub struct Database {
    pub name: String,
    server_url: String,
}

impl Database {
    /// Create `flotilla_<tag>_<pid>_<micros>`, owned by `owner` if given.
    pub async fn create(server_url: &str, tag: &str, owner: Option<&str>) -> Database {
        let name = format!(
            "flotilla_{tag}_{}_{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_micros())
                .unwrap_or_default()
        );
        let owner = owner.map(|o| format!(" OWNER {o}")).unwrap_or_default();
        admin(server_url)
            .await
            .batch_execute(&format!("CREATE DATABASE {name}{owner}"))
            .await
            .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
        Database {
            name,
            server_url: server_url.to_owned(),
        }
    }

    /// The server URL pointed at this database.
    pub fn url(&self) -> String {
        with_database(&self.server_url, &self.name)
    }

    /// How many connections to this database use TLS, and how many do not.
    pub async fn tls_connections(&self) -> (i64, i64) {
        let row = admin(&self.server_url)
            .await
            .query_one(
                "SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl) \
                 FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.datname = $1",
                &[&self.name],
            )
            .await
            .expect("reading pg_stat_ssl");
        (row.get(0), row.get(1))
    }

    /// Drop the database, closing whatever still uses it.
    pub async fn drop_now(self) {
        let sql = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        if let Err(e) = admin(&self.server_url).await.batch_execute(&sql).await {
            eprintln!("dropping test database {}: {e}", self.name);
        }
    }
}

/// An error and all its sources, one line.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

/// Store logs in the test output (RUST_LOG to change).
pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(std::env::var("RUST_LOG").unwrap_or_else(|_| "flotilla_store=info".into()))
        .with_test_writer()
        .try_init();
}

/// A nats-server of its own on a free loopback port, killed when dropped.
pub struct Nats {
    child: std::process::Child,
    pub url: String,
}

impl Nats {
    /// Start one, or panic saying how to install it.
    pub fn start() -> Nats {
        let bin = [
            "nats-server",
            "/usr/sbin/nats-server",
            "/usr/bin/nats-server",
        ]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .unwrap_or_else(|| {
            panic!(
                "nats-server is not installed: run scripts/test (it installs it), or \
                     `apt-get install nats-server`"
            )
        });
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = std::process::Command::new(bin)
            .args(["-a", "127.0.0.1", "-p", &port.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting nats-server");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "nats-server did not listen on {port}"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Nats {
            child,
            url: format!("nats://127.0.0.1:{port}"),
        }
    }

    /// Stop it now (SIGKILL).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.kill();
    }
}
