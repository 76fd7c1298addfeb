//! Replicas sharing one PostgreSQL database: every replica's watch feed carries every commit.
//!
//! Commits are serialized by the meta row lock (see [`super::writer`]), so revisions become
//! visible in order: once revision N can be read, so can every revision before it. That makes
//! the event log itself the outbox: a replica that knows a revision N was committed reads the
//! log after the last revision it broadcast, up to N and beyond, and hands the events to its
//! watchers, never seeing a later revision before an earlier one.
//!
//! How a replica learns of other replicas' commits:
//! - each writer announces every group it commits on NATS, subject
//!   `flotilla.store.<database uid>.commits`: its last revision and, when they fit, its events
//!   ([`codec`]), which the others broadcast as they are when they follow what they have, and
//!   otherwise read from the log;
//! - a batch of this replica's own commits that follows a hole (others committed in between
//!   and their announcement has not arrived) is held by the broadcast and wakes the follower;
//! - the follower also reads the revision counter every [`POLL`], so an announcement lost with
//!   a replica that died just after its commit, or with NATS itself, delays watchers by at
//!   most that long and loses nothing.
//!
//! Announcements of different replicas may arrive out of revision order: a batch after a hole
//! waits [`HOLE_GRACE`] for the announcement that fills it before the log is read. The log stays
//! the truth; NATS is a shortcut to it. Core NATS publish/subscribe is enough for that:
//! JetStream's persistence would add nothing the log does not have.

mod codec;

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::{FutureExt, StreamExt};

use super::conn::{PgConn, Target};
use super::read;
use crate::backend::Shared;
use crate::{Error, Result, Revision};

/// How often the follower reads the revision counter when nothing is announced.
pub(super) const POLL: Duration = Duration::from_millis(500);
/// How long a hole may wait for the announcement that fills it before the log is read.
const HOLE_GRACE: Duration = Duration::from_millis(3);
/// Events read per log query while catching up.
const PAGE: usize = 1024;

/// The NATS subject of a database's commit announcements.
fn subject(uid: &str) -> String {
    format!("flotilla.store.{uid}.commits")
}

/// Connect to NATS at `url`. The connection is made in the background and retried for as long
/// as it takes: without it replicas still see each other's commits, within [`POLL`].
pub(super) async fn connect(url: &str) -> Result<async_nats::Client> {
    async_nats::ConnectOptions::new()
        .name("flotilla-hub")
        .no_echo()
        .retry_on_initial_connect()
        .event_callback(|event| async move {
            match event {
                async_nats::Event::Connected => tracing::info!("connected to NATS"),
                async_nats::Event::Disconnected => {
                    tracing::warn!(
                        "disconnected from NATS; replicas' commits are polled until it is back"
                    )
                }
                other => tracing::debug!(event = %other, "NATS"),
            }
        })
        .connect(url)
        .await
        .map_err(|e| Error::Nats {
            detail: format!("cannot connect to {}: {e}", redact(url)),
        })
}

/// `url` without credentials, for messages.
fn redact(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.rsplit_once('@') {
            Some((_, host)) => format!("{scheme}://…@{host}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// That everything up to `last` has committed, `events` being the group that ends there, as
/// the bytes [`Announcer::publish`] sends (encoded while the writer still holds the events).
pub(super) fn announcement(last: Revision, events: &[crate::Event]) -> bytes::Bytes {
    codec::encode(last, events)
}

/// The writer's end: announces committed revisions.
#[derive(Clone)]
pub(super) struct Announcer {
    client: async_nats::Client,
    subject: async_nats::Subject,
}

impl Announcer {
    pub(super) fn new(client: async_nats::Client, uid: &str) -> Announcer {
        Announcer {
            client,
            subject: subject(uid).into(),
        }
    }

    /// Send an [`announcement`] to the other replicas. Best effort: a lost one is made up for
    /// by their polling.
    pub(super) async fn publish(&self, payload: bytes::Bytes) {
        if let Err(e) = self.client.publish(self.subject.clone(), payload).await {
            tracing::debug!(error = %e, "cannot announce a commit on NATS");
        }
    }
}

/// Follow the other replicas' commits until the store closes or is dropped: on every
/// announcement, hole or poll, read the log after the last revision broadcast and broadcast it.
pub(super) async fn follow(
    shared: Weak<Shared>,
    client: async_nats::Client,
    uid: String,
    mut conn: PgConn,
    target: Target,
) {
    let mut announcements = match client.subscribe(subject(&uid)).await {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::warn!(error = %e, "cannot subscribe to commit announcements; polling only");
            None
        }
    };
    let mut poll = tokio::time::interval(POLL);
    poll.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let Some(store) = shared.upgrade() else {
            return;
        };
        if store.is_closed() {
            return;
        }
        let announced = async {
            match announcements.as_mut() {
                Some(s) => s.next().await,
                None => std::future::pending().await,
            }
        };
        let want = tokio::select! {
            message = announced => match message {
                Some(m) => {
                    let mut want = receive(&store, m.payload);
                    // Announcements queued meanwhile are taken in the same turn.
                    while let Some(Some(m)) = announcements.as_mut().and_then(|s| s.next().now_or_never()) {
                        want = want.max(receive(&store, m.payload));
                    }
                    want
                }
                None => {
                    announcements = None;
                    None
                }
            },
            () = store.hole() => {
                // The announcement filling the hole is usually on its way.
                let grace = tokio::time::sleep(HOLE_GRACE);
                tokio::pin!(grace);
                while store.held_until().is_some() {
                    let Some(s) = announcements.as_mut() else { break };
                    tokio::select! {
                        m = s.next() => match m {
                            Some(m) => { receive(&store, m.payload); }
                            None => break,
                        },
                        () = &mut grace => break,
                    }
                }
                store.held_until()
            }
            _ = poll.tick() => counter(&mut conn, &target).await,
        };
        if let Some(want) = want.filter(|w| *w > store.sent()) {
            if let Err(e) = catch_up(&store, &mut conn, &target, want).await {
                tracing::warn!(error = %e, "cannot read other replicas' commits; retrying");
                drop(store);
                tokio::time::sleep(POLL).await;
            }
        }
    }
}

/// Take an announcement: broadcast the events it carries (the broadcast orders them, holding
/// them after a hole); the revision to read the log up to, if it carries none.
fn receive(store: &Shared, payload: bytes::Bytes) -> Option<Revision> {
    match codec::decode(payload)? {
        (last, Some(events)) => {
            store.committed(last, events);
            None
        }
        (last, None) => Some(last),
    }
}

/// The revision counter, or `None` (logged) when the database cannot be read.
async fn counter(conn: &mut PgConn, target: &Target) -> Option<Revision> {
    let read = async {
        conn.ensure_open(target).await?;
        read::revision(conn).await
    };
    match read.await {
        Ok(r) => Some(r),
        Err(e) => {
            tracing::debug!(error = %e, "cannot read the revision counter");
            None
        }
    }
}

/// Broadcast the log from the last revision sent through at least `want`.
async fn catch_up(
    store: &Arc<Shared>,
    conn: &mut PgConn,
    target: &Target,
    want: Revision,
) -> Result<()> {
    conn.ensure_open(target).await?;
    while store.sent() < want {
        let after = store.sent();
        let events = match read::events_after(conn, after, PAGE).await {
            Ok(events) => events,
            Err(Error::Compacted { compacted, .. }) => {
                // This replica fell behind a compaction: what it missed is gone. Watchers that
                // needed it learn so from the log (410 Gone) and start over.
                tracing::error!(
                    from = after,
                    compacted,
                    "this replica fell behind the event log's compaction; skipping to it"
                );
                store.skip_to(compacted);
                continue;
            }
            Err(e) => return Err(e),
        };
        let Some(last) = events.last().map(|e| e.revision) else {
            return Ok(());
        };
        store.committed(last, events);
    }
    Ok(())
}
