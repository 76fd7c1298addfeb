//! Which replica of several runs the server's own loops: the ones that follow every write and
//! write on their own (garbage collection, namespace deletion, quota and disruption-budget
//! status). Each replica running them would make every replica decode every commit once more,
//! and three replicas race to make the same writes; one is enough, as each loop is
//! level-triggered and starts from the current state wherever it starts.
//!
//! The replicas elect it by a session advisory lock of its own ([`advisory`]), not the writer
//! of record's: that one also needs NATS, and the loops do not; and the two roles, each some
//! work, may as well land on different replicas. The holder checks every [`ELECT_EVERY`] that
//! its session answers; when it does not, it stops leading (the server releases the lock with
//! the session), and another replica takes the lock within [`ELECT_EVERY`]. Two leaders for a
//! moment (the old one not yet aware) or none for a moment are both safe. Where advisory locks
//! elect nobody (CockroachDB), every replica leads, as every process did before.

use std::sync::Weak;
use std::time::Duration;

use tokio::sync::watch;

use super::advisory::{self, Try};
use super::conn::Target;
use crate::backend::Shared;

/// The advisory lock key of the loops' leader ("flotloop" in ASCII).
const LOCK_KEY: i64 = 0x666c_6f74_6c6f_6f70;
/// How often a replica tries to lead, and how often the leader checks its session.
const ELECT_EVERY: Duration = Duration::from_secs(1);

/// Start electing; the receiver says whether this replica leads, until the store closes.
pub(super) fn start(shared: Weak<Shared>, target: Target) -> watch::Receiver<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(elect(shared, target, tx));
    rx
}

async fn elect(shared: Weak<Shared>, target: Target, leads: watch::Sender<bool>) {
    let mut session = None;
    let mut refused = false;
    loop {
        if shared.upgrade().is_none_or(|s| s.is_closed()) {
            leads.send_replace(false);
            return;
        }
        let held = *leads.borrow();
        let now = if held {
            let answers = match &session {
                Some(s) => advisory::alive(s).await.is_ok(),
                None => false,
            };
            if !answers {
                // Dropping the session ends it, which releases the lock if it still held.
                session = None;
            }
            answers
        } else {
            match advisory::try_lock(&target, &mut session, LOCK_KEY).await {
                Ok(Try::Held) => true,
                Ok(Try::Taken) => false,
                Ok(Try::NotExclusive) => {
                    tracing::info!(
                        "the database's advisory locks are not exclusive (CockroachDB): every \
                         replica runs the server's own loops"
                    );
                    // Dropping the sender leaves the receivers this value for good.
                    leads.send_replace(true);
                    return;
                }
                Err(e) => {
                    session = None;
                    if !refused {
                        refused = true;
                        tracing::warn!(error = %e, "cannot ask for the loops' leader lock");
                    }
                    false
                }
            }
        };
        if now {
            refused = false;
        }
        if now != held {
            tracing::info!(
                leads = now,
                "{}",
                if now {
                    "this replica runs the server's own loops (garbage collection, namespace deletion, quota and budget status)"
                } else {
                    "this replica no longer runs the server's own loops"
                }
            );
            leads.send_replace(now);
        }
        tokio::time::sleep(ELECT_EVERY).await;
    }
}
