//! One replica commits for all: writes made on other replicas are handed to it over NATS.
//!
//! Commits are serialized by the meta row lock ([`super::writer`]), which keeps revisions in
//! order whoever commits. But each replica's writer takes the lock for its own group only, so
//! with clients spread over three replicas each group holds a third of the writes, and three
//! groups queue for the lock where one replica alone would have committed one: a third of the
//! throughput. So the replicas elect one of them, the *writer of record*, by a PostgreSQL
//! session advisory lock (released by the server as soon as the holder's session ends, also
//! when it is killed), and the others hand it their writes (NATS request/reply, subject
//! `flotilla.store.<database uid>.writes`, queue group `writer`), which it commits in its own
//! groups, as large as if every client had come to it.
//!
//! A replica hands its writes on the way its writer commits them: one message in flight at a
//! time, carrying every write that queued while the previous one was answered ([`codec::frame`]),
//! so the messages, like the groups, grow with the load instead of multiplying. An answer late
//! by [`STALL`] no longer holds the next message back (its writes may have died with the writer
//! of record; the next ones then find nobody to take them, and commit here).
//!
//! Handing on is only a shortcut; the lock still orders every commit. So nothing depends on
//! there being exactly one writer of record: while none answers (NATS down or not connected,
//! no holder yet, the holder stopping), a replica commits its writes itself, and two holders
//! at once (the old one not yet aware its session is gone) are as safe as none. A write whose
//! answer does not come back within [`ANSWER_WITHIN`] has an unknown outcome, like a COMMIT
//! lost with its connection.
//!
//! Only writes whose value is plain data ([`Render::splice`](crate::Render::splice)) travel;
//! a value made by a function is committed where it was made.

mod codec;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use tokio::sync::{mpsc, oneshot};

use super::advisory::{self, Try};
use super::conn::{PgConn, Target};
use crate::backend::Shared;
use crate::batch::{self, Op};
use crate::{Error, Record, Result};

/// The advisory lock key of the writer of record ("flotilla" in ASCII).
const LOCK_KEY: i64 = 0x666c_6f74_696c_6c61;
/// How often a replica tries to become the writer of record, and how often the holder checks
/// that its lock's session is alive.
const ELECT_EVERY: Duration = Duration::from_secs(1);
/// How long a handed-on write may take before its outcome counts as unknown.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);
/// How long a handed-on write's answer waits for this replica's feed to reach its revision,
/// so that what this replica serves next includes it.
const FEED_WITHIN: Duration = Duration::from_secs(1);
/// How long the next message of handed-on writes waits for the answer to the one before.
const STALL: Duration = Duration::from_millis(200);
/// The NATS queue group of the writer of record's subscription.
const QUEUE: &str = "writer";
/// Writes handed on in one message at most, and their bytes at most (a larger write is
/// committed where it was made).
const MAX_WRITES: usize = 512;
const MAX_BYTES: usize = 256 * 1024;

/// The NATS subject writes are handed on to.
fn subject(uid: &str) -> String {
    format!("flotilla.store.{uid}.writes")
}

/// Where this replica's writes go.
pub(super) struct Forwarder {
    client: async_nats::Client,
    /// Writes waiting for the message that hands them on.
    queue: mpsc::Sender<Pending>,
    /// Whether this replica is the writer of record.
    holder: Arc<AtomicBool>,
    /// Writes the writer of record answered.
    handed: AtomicU64,
}

/// One write waiting to be handed on: its bytes, and where its answer goes.
struct Pending {
    payload: Bytes,
    answer: oneshot::Sender<Reply>,
}

/// What came back for one handed-on write.
enum Reply {
    /// The writer of record's answer ([`codec::decode_answer`]).
    Answer(Bytes),
    /// Nobody took the message.
    NotTaken,
    /// The message went, and no readable answer came back: the outcome is unknown.
    Lost(String),
}

/// What became of a write offered to the writer of record.
pub(super) enum Handed {
    /// It answered.
    Done(Result<Record>),
    /// Nobody took it: commit it here.
    Back(Op),
}

impl Forwarder {
    /// Start electing the writer of record among the replicas of the database `uid`; the
    /// election runs until `shared`'s store closes or is dropped.
    pub(super) fn start(
        shared: Weak<Shared>,
        client: async_nats::Client,
        uid: &str,
        target: Target,
    ) -> Forwarder {
        let holder = Arc::new(AtomicBool::new(false));
        tokio::spawn(elect(
            shared,
            client.clone(),
            subject(uid),
            target,
            holder.clone(),
        ));
        let (queue, pending) = mpsc::channel(crate::batch::MAX_BATCH * 4);
        tokio::spawn(send(client.clone(), subject(uid).into(), pending));
        Forwarder {
            client,
            queue,
            holder,
            handed: AtomicU64::new(0),
        }
    }

    /// Whether this replica commits for the others, and how many of its writes were
    /// committed by another.
    pub(super) fn stats(&self) -> crate::ReplicaStats {
        crate::ReplicaStats {
            writer_of_record: self.holder.load(Ordering::Acquire),
            handed_on: self.handed.load(Ordering::Relaxed),
        }
    }

    /// Offer `op` to the writer of record, unless this replica is it.
    pub(super) async fn hand(&self, shared: &Shared, op: Op) -> Handed {
        let connected = self.client.connection_state() == async_nats::connection::State::Connected;
        if self.holder.load(Ordering::Acquire) || !connected {
            return Handed::Back(op);
        }
        let Some(payload) = codec::encode_op(&op).filter(|p| p.len() <= MAX_BYTES) else {
            return Handed::Back(op);
        };
        let (answer, reply) = oneshot::channel();
        if self.queue.send(Pending { payload, answer }).await.is_err() {
            return Handed::Back(op);
        }
        let reply = match reply.await {
            Ok(Reply::Answer(bytes)) => bytes,
            Ok(Reply::NotTaken) => return Handed::Back(op),
            Ok(Reply::Lost(why)) => return Handed::Done(Err(unknown(why))),
            Err(_) => return Handed::Done(Err(unknown("the store closed".into()))),
        };
        let key = op.key().to_owned();
        let outcome = match codec::decode_answer(reply, &key) {
            Some(codec::Answer::NotTaken) => return Handed::Back(op),
            Some(codec::Answer::Taken(outcome)) => {
                self.handed.fetch_add(1, Ordering::Relaxed);
                outcome
            }
            None => Err(unknown("an answer that cannot be read".into())),
        };
        if let Some(revision) = batch::revision_of(&outcome) {
            if !shared.reached(revision, FEED_WITHIN).await {
                tracing::debug!(
                    revision,
                    "a handed-on write's revision has not reached this replica's feed yet"
                );
            }
        }
        Handed::Done(outcome.map(|rec| with_value(rec, op)))
    }
}

/// The record of a done write with its value, rendered here as the writer of record did.
fn with_value(mut rec: Record, op: Op) -> Record {
    rec.value = op.into_render().render(rec.mod_revision);
    rec
}

fn unknown(why: String) -> Error {
    Error::CommitUnknown {
        source: Error::source_of(codec::Remote(format!(
            "the write was handed to the replica that commits, and {why}"
        ))),
    }
}

/// Hand queued writes on, one message at a time, each with every write queued meanwhile (up to
/// [`MAX_WRITES`] and [`MAX_BYTES`]); ends when the [`Forwarder`] is dropped.
async fn send(
    client: async_nats::Client,
    subject: async_nats::Subject,
    mut queue: mpsc::Receiver<Pending>,
) {
    while let Some(first) = queue.recv().await {
        let limit = MAX_BYTES.min(client.server_info().max_payload / 2).max(1);
        let mut size = first.payload.len();
        let mut batch = vec![first];
        while batch.len() < MAX_WRITES && size < limit {
            match queue.try_recv() {
                Ok(p) => {
                    size += p.payload.len();
                    batch.push(p);
                }
                Err(_) => break,
            }
        }
        let parts: Vec<Bytes> = batch.iter().map(|p| p.payload.clone()).collect();
        let payload = codec::frame(&parts);
        drop(parts);
        let (client, subject) = (client.clone(), subject.clone());
        let (answered, done) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let asked = client.request(subject, payload);
            let answers = match tokio::time::timeout(ANSWER_WITHIN, asked).await {
                Ok(Ok(message)) => match codec::unframe(message.payload) {
                    Some(answers) if answers.len() == batch.len() => {
                        answers.into_iter().map(Reply::Answer).collect()
                    }
                    _ => lost(batch.len(), "an answer that cannot be read"),
                },
                Ok(Err(e)) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                    (0..batch.len()).map(|_| Reply::NotTaken).collect()
                }
                Ok(Err(e)) => lost(batch.len(), &e.to_string()),
                Err(_) => lost(batch.len(), "no answer in time"),
            };
            for (pending, reply) in batch.into_iter().zip(answers) {
                // The writer may have given up waiting; the write stands regardless.
                let _ = pending.answer.send(reply);
            }
            drop(answered);
        });
        // The next message waits for this one's answer, so that it takes everything queued
        // meanwhile; but not for long, as the writer of record may have died with it.
        let _ = tokio::time::timeout(STALL, done).await;
    }
}

fn lost(n: usize, why: &str) -> Vec<Reply> {
    (0..n).map(|_| Reply::Lost(why.to_owned())).collect()
}

/// Try to become the writer of record every [`ELECT_EVERY`]; while this replica is, take the
/// other replicas' writes.
async fn elect(
    shared: Weak<Shared>,
    client: async_nats::Client,
    subject: String,
    target: Target,
    holder: Arc<AtomicBool>,
) {
    let mut refused = false;
    // The session that asks for the lock, kept between tries.
    let mut session = None;
    loop {
        if shared.upgrade().is_none_or(|s| s.is_closed()) {
            return;
        }
        match advisory::try_lock(&target, &mut session, LOCK_KEY).await {
            Ok(Try::NotExclusive) => {
                tracing::info!(
                    "the database's advisory locks are not exclusive (CockroachDB): no replica \
                     commits for the others; each commits its own writes"
                );
                return;
            }
            Ok(Try::Held) => {
                refused = false;
                let conn = session.take().expect("a session that took the lock");
                match client.queue_subscribe(subject.clone(), QUEUE.into()).await {
                    // Once the server has the subscription (the flush's round trip), no
                    // write offered after this replica says it holds goes unanswered.
                    Ok(mut writes) if client.flush().await.is_ok() => {
                        holder.store(true, Ordering::Release);
                        tracing::info!("this replica now commits the writes of every replica");
                        serve(&shared, &client, &mut writes, &conn).await;
                        holder.store(false, Ordering::Release);
                        // Still holding the lock: answer what was handed over already.
                        finish(&shared, &client, writes).await;
                        tracing::info!("this replica no longer commits for the others");
                    }
                    Ok(_) => {
                        tracing::warn!("cannot take the replicas' writes: NATS is not answering")
                    }
                    Err(e) => tracing::warn!(error = %e, "cannot take the replicas' writes"),
                }
                // Dropping the connection ends its session, which releases the lock.
                drop(conn);
            }
            Ok(Try::Taken) => {}
            Err(e) => {
                session = None;
                if !refused {
                    refused = true;
                    tracing::warn!(
                        error = %e,
                        "cannot take the writer-of-record lock; this replica commits its own \
                         writes"
                    );
                }
            }
        }
        tokio::time::sleep(ELECT_EVERY).await;
    }
}

/// Take handed-on writes until the lock's session fails or the store closes.
async fn serve(
    shared: &Weak<Shared>,
    client: &async_nats::Client,
    writes: &mut async_nats::Subscriber,
    lock: &PgConn,
) {
    let mut check = tokio::time::interval(ELECT_EVERY);
    loop {
        tokio::select! {
            message = writes.next() => {
                let Some(message) = message else { return };
                answer(shared, client, message);
            }
            _ = check.tick() => {
                if shared.upgrade().is_none_or(|s| s.is_closed()) {
                    return;
                }
                if let Err(e) = advisory::alive(lock).await {
                    tracing::warn!(error = %e, "lost the writer-of-record lock's session");
                    return;
                }
            }
        }
    }
}

/// Stop taking handed-on writes, and answer those the subscription holds already: they were
/// delivered to this replica alone, and left unanswered their senders would wait
/// [`ANSWER_WITHIN`] and then count them as unknown. Each is committed here if the store is
/// still open, or refused (the sender then commits it itself: it was not committed).
async fn finish(
    shared: &Weak<Shared>,
    client: &async_nats::Client,
    mut writes: async_nats::Subscriber,
) {
    if let Err(e) = writes.drain().await {
        tracing::debug!(error = %e, "cannot stop taking handed-on writes");
        return;
    }
    // The stream ends once the server has the unsubscription and what it sent before is read.
    let drained = async {
        while let Some(message) = writes.next().await {
            answer(shared, client, message);
        }
    };
    if tokio::time::timeout(ANSWER_WITHIN, drained).await.is_err() {
        tracing::debug!("handed-on writes still arriving after the unsubscription");
    }
}

/// Commit a message of handed-on writes, or refuse them all if the store is gone.
fn answer(shared: &Weak<Shared>, client: &async_nats::Client, message: async_nats::Message) {
    let Some(reply) = message.reply else { return };
    tokio::spawn(take(
        shared.upgrade(),
        client.clone(),
        reply,
        message.payload,
    ));
}

/// Commit a message of handed-on writes, in order, and answer them in one message (every one
/// refused if the store is gone).
async fn take(
    store: Option<Arc<Shared>>,
    client: async_nats::Client,
    reply: async_nats::Subject,
    payload: Bytes,
) {
    let Some(parts) = codec::unframe(payload) else {
        tracing::warn!("ignoring handed-on writes that cannot be read");
        return;
    };
    // Queued one after the other, so that they commit in the order they came, mostly in one
    // group; a write that is not taken (the store closing) is answered so, and so is every
    // write after it, which the sender then commits itself.
    let mut outcomes = Vec::with_capacity(parts.len());
    let mut taking = true;
    for part in parts {
        let op = codec::decode_op(part).filter(|_| taking);
        let outcome = match (op, &store) {
            (Some(op), Some(store)) => store.taken(op).await.ok(),
            _ => None,
        };
        taking = outcome.is_some();
        outcomes.push(outcome);
    }
    drop(store);
    let mut answers = Vec::with_capacity(outcomes.len());
    for outcome in outcomes {
        answers.push(match outcome {
            Some(answer) => codec::encode_answer(Some(&answer.await)),
            None => codec::encode_answer(None),
        });
    }
    if let Err(e) = client.publish(reply, codec::frame(&answers)).await {
        tracing::debug!(error = %e, "cannot answer handed-on writes");
    }
}
