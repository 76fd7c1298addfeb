//! PostgreSQL connections and the tables.
//!
//! Plain SQL only (no PL/pgSQL, advisory locks, or PostgreSQL-only types beyond BYTEA and
//! arrays), so the same statements can run on CockroachDB. Keys are BYTEA, not TEXT, so they
//! compare byte-wise whatever the database's collation is.

use std::collections::HashMap;

use tokio_postgres::{Client, Config, Statement, Transaction};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{tls, url};
use crate::sql::{EVENTS, META, OBJECTS};
use crate::{Durability, Error, Result, Revision};

pub(super) type PgError = tokio_postgres::Error;

/// Where and how to connect: the driver's configuration, the TLS connector built from the
/// URL's sslmode, and the servers' names for messages (never the URL: it may hold a password).
#[derive(Clone)]
pub(super) struct Target {
    config: Config,
    tls: MakeRustlsConnect,
    pub host: String,
    /// Set on every connection (`synchronous_commit`), whatever the server's default.
    durability: Durability,
}

impl Target {
    /// Read the URL and load its TLS files.
    pub(super) fn new(url: &str, durability: Durability) -> Result<Target> {
        let parsed = url::parse(url)?;
        let tls = tls::connector(&parsed.tls, &parsed.host)?;
        if matches!(
            parsed.tls.mode,
            url::SslMode::Disable | url::SslMode::Prefer
        ) && !url::is_local(&parsed.config)
        {
            tracing::warn!(
                host = %parsed.host,
                sslmode = ?parsed.tls.mode,
                "the connection to PostgreSQL may be unencrypted and its server is not verified; \
                 use sslmode=verify-full for a database that is not on this machine"
            );
        }
        Ok(Target {
            config: parsed.config,
            tls,
            host: parsed.host,
            durability,
        })
    }
}

/// A client plus the statements prepared on it.
pub(super) struct PgConn {
    pub client: Client,
    statements: HashMap<String, Statement>,
}

impl PgConn {
    pub(super) async fn connect(target: &Target) -> Result<PgConn> {
        let (client, connection) =
            target
                .config
                .connect(target.tls.clone())
                .await
                .map_err(|e| Error::ConnectPostgres {
                    host: target.host.clone(),
                    source: Error::source_of(e),
                })?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::warn!(error = %e, "PostgreSQL connection ended");
            }
        });
        // Acknowledged means flushed to the server's WAL (`on`), or only committed (`off`):
        // set here so a server configured otherwise does not decide it. A server without the
        // setting (CockroachDB commits through its replicated, synced log anyway) keeps its own.
        let synchronous = match target.durability {
            Durability::Full => "on",
            Durability::Relaxed => "off",
        };
        if let Err(e) = client
            .batch_execute(&format!("SET synchronous_commit = {synchronous}"))
            .await
        {
            tracing::warn!(host = %target.host, error = %e, synchronous,
                "the database refused synchronous_commit; its own default decides durability");
        }
        Ok(PgConn {
            client,
            statements: HashMap::new(),
        })
    }

    /// Reconnect if the server dropped the connection, so one restart of the database does
    /// not leave the store broken until the process restarts.
    pub(super) async fn ensure_open(&mut self, target: &Target) -> Result<()> {
        if self.client.is_closed() {
            tracing::info!(host = %target.host, "reconnecting to PostgreSQL");
            *self = PgConn::connect(target).await?;
        }
        Ok(())
    }

    /// Start a transaction, with the statement cache alongside it.
    pub(super) async fn begin(
        &mut self,
        snapshot: bool,
    ) -> Result<(Transaction<'_>, &mut HashMap<String, Statement>), PgError> {
        let builder = self.client.build_transaction();
        let builder = if snapshot {
            builder
                .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
        } else {
            builder
        };
        let tx = builder.start().await?;
        Ok((tx, &mut self.statements))
    }

    /// A statement prepared once per connection.
    pub(super) async fn prepared(&mut self, sql: &str) -> Result<Statement, PgError> {
        prepare(&self.client, &mut self.statements, sql).await
    }
}

/// Prepare `sql` on `client` (a `Client` or a `Transaction`) unless already cached.
pub(super) async fn prepare<C: tokio_postgres::GenericClient>(
    client: &C,
    cache: &mut HashMap<String, Statement>,
    sql: &str,
) -> Result<Statement, PgError> {
    if let Some(s) = cache.get(sql) {
        return Ok(s.clone());
    }
    let s = client.prepare(sql).await?;
    cache.insert(sql.to_owned(), s.clone());
    Ok(s)
}

/// What [`migrate`] reads back.
pub(super) struct Opened {
    pub revision: Revision,
    pub compacted: Revision,
    /// The database's own id, made at its first open: names its NATS subjects, so that
    /// databases sharing a NATS server do not hear each other.
    pub uid: String,
}

/// One row `(id = 1, uid)`: the database's id.
const INSTANCE: &str = "flotilla_instance";

/// Create the tables if absent; the stored counters and the database's id.
pub(super) async fn migrate(conn: &PgConn) -> Result<Opened> {
    let err = |e| Error::Migrate {
        source: Error::source_of(e),
    };
    conn.client
        .batch_execute(&format!(
            "CREATE TABLE IF NOT EXISTS {OBJECTS} (
                 key BYTEA PRIMARY KEY,
                 create_revision BIGINT NOT NULL,
                 mod_revision BIGINT NOT NULL,
                 value BYTEA NOT NULL
             );
             CREATE TABLE IF NOT EXISTS {EVENTS} (
                 revision BIGINT PRIMARY KEY,
                 key BYTEA NOT NULL,
                 kind SMALLINT NOT NULL,
                 value BYTEA NOT NULL,
                 prev_value BYTEA,
                 prev_mod_revision BIGINT,
                 create_revision BIGINT NOT NULL
             );
             CREATE TABLE IF NOT EXISTS {META} (
                 id INT PRIMARY KEY,
                 revision BIGINT NOT NULL,
                 compacted BIGINT NOT NULL
             );
             INSERT INTO {META} (id, revision, compacted) VALUES (1, 0, 0)
                 ON CONFLICT (id) DO NOTHING;
             CREATE TABLE IF NOT EXISTS {INSTANCE} (
                 id INT PRIMARY KEY,
                 uid TEXT NOT NULL
             );
             INSERT INTO {INSTANCE} (id, uid) VALUES (1, gen_random_uuid()::TEXT)
                 ON CONFLICT (id) DO NOTHING;"
        ))
        .await
        .map_err(err)?;
    let row = conn
        .client
        .query_one(&crate::sql::counters(), &[])
        .await
        .map_err(err)?;
    let uid = conn
        .client
        .query_one(&format!("SELECT uid FROM {INSTANCE} WHERE id = 1"), &[])
        .await
        .map_err(err)?;
    Ok(Opened {
        revision: row.get(0),
        compacted: row.get(1),
        uid: uid.get(0),
    })
}

/// A stored key back into a `String`; keys are only ever written from `&str`.
pub(super) fn decode_key(bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| Error::DecodeRow {
        detail: format!("stored key is not UTF-8: {e}"),
    })
}
