//! PostgreSQL session advisory locks, by which replicas elect one of them for a role (the
//! writer of record, [`super::forward`]; the replica that runs the server's own loops,
//! [`super::lead`]). The server releases such a lock as soon as the session holding it ends,
//! also when its process is killed, so a role held by a dead replica is free again at once.

use super::conn::{PgConn, Target};
use crate::{Error, Result};

/// How a try for a lock went.
pub(super) enum Try {
    /// This session holds the lock.
    Held,
    /// Another session holds it.
    Taken,
    /// The database grants such locks to every caller (CockroachDB's session advisory locks
    /// are stubs), so they elect nobody.
    NotExclusive,
}

/// Ask for the advisory lock `key` on `session`, connecting it first if need be.
pub(super) async fn try_lock(
    target: &Target,
    session: &mut Option<PgConn>,
    key: i64,
) -> Result<Try> {
    let query_err = |e| Error::Query {
        source: Error::source_of(e),
    };
    let conn = match session {
        Some(conn) => conn,
        None => {
            let conn = PgConn::connect(target).await?;
            let version: String = conn
                .client
                .query_one("SELECT version()", &[])
                .await
                .map_err(query_err)?
                .get(0);
            if version.contains("CockroachDB") {
                return Ok(Try::NotExclusive);
            }
            session.insert(conn)
        }
    };
    let row = conn
        .client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&key])
        .await
        .map_err(query_err)?;
    Ok(if row.get::<_, bool>(0) {
        Try::Held
    } else {
        Try::Taken
    })
}

/// Whether the session holding a lock still answers (when it does not, the server has or soon
/// will have released the lock).
pub(super) async fn alive(session: &PgConn) -> Result<()> {
    session
        .client
        .simple_query("SELECT 1")
        .await
        .map(drop)
        .map_err(|e| Error::Query {
            source: Error::source_of(e),
        })
}
