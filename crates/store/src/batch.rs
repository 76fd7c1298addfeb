//! Group commit, the part both backends share.
//!
//! A writer (a thread for SQLite, a task for PostgreSQL) takes the first request from the
//! channel, drains whatever else is already queued (up to [`MAX_BATCH`]), and commits all of it
//! in one transaction. Inside that transaction it reads the current rows of the keys involved,
//! then [`plan`] decides each write in queue order against that state, so that one write
//! failing its precondition fails alone, and later writes to the same key see earlier ones.
//! The backend then applies the plan's final rows and log entries, and the writer answers every
//! request once the commit is durable.

use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};

use bytes::Bytes;
use tokio::sync::{mpsc, oneshot};

use crate::{Error, Event, EventKind, Record, Render, Result, Revision};

/// How many requests one transaction takes at most.
pub(crate) const MAX_BATCH: usize = 512;

/// One write's operation.
pub(crate) enum Op {
    Create {
        key: String,
        render: Render,
    },
    Update {
        key: String,
        expected: Revision,
        render: Render,
    },
    Delete {
        key: String,
        expected: Revision,
        render: Render,
    },
}

impl Op {
    pub(crate) fn key(&self) -> &str {
        match self {
            Op::Create { key, .. } | Op::Update { key, .. } | Op::Delete { key, .. } => key,
        }
    }

    /// How its value is made.
    pub(crate) fn into_render(self) -> Render {
        match self {
            Op::Create { render, .. } | Op::Update { render, .. } | Op::Delete { render, .. } => {
                render
            }
        }
    }
}

/// The revision a write's outcome shows the store at: the write's own, or for a conflict the
/// current record's.
pub(crate) fn revision_of(outcome: &Result<Record>) -> Option<Revision> {
    match outcome {
        Ok(rec) => Some(rec.mod_revision),
        Err(Error::Conflict {
            current: Some(rec), ..
        }) => Some(rec.mod_revision),
        Err(_) => None,
    }
}

/// What the writer is asked to do.
pub(crate) enum Request {
    Write {
        op: Op,
        reply: oneshot::Sender<Result<Record>>,
    },
    Compact {
        revision: Revision,
        reply: oneshot::Sender<Result<()>>,
    },
}

/// Take the next group of requests: block for the first, then take what is already queued.
/// `None` once the channel is closed and drained.
pub(crate) fn drain(first: Request, rx: &mut mpsc::Receiver<Request>) -> Vec<Request> {
    let mut batch = vec![first];
    while batch.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(r) => batch.push(r),
            Err(_) => break,
        }
    }
    batch
}

/// Split a drained group into runs of writes and single compactions, keeping their order, so a
/// compaction never shares a transaction with writes.
pub(crate) enum Step {
    Writes(Vec<(Op, oneshot::Sender<Result<Record>>)>),
    Compact(Revision, oneshot::Sender<Result<()>>),
}

pub(crate) fn steps(batch: Vec<Request>) -> Vec<Step> {
    let mut out = Vec::new();
    let mut writes = Vec::new();
    for r in batch {
        match r {
            Request::Write { op, reply } => writes.push((op, reply)),
            Request::Compact { revision, reply } => {
                if !writes.is_empty() {
                    out.push(Step::Writes(std::mem::take(&mut writes)));
                }
                out.push(Step::Compact(revision, reply));
            }
        }
    }
    if !writes.is_empty() {
        out.push(Step::Writes(writes));
    }
    out
}

/// The distinct keys a group of writes touches, for loading their current rows.
pub(crate) fn keys(ops: &[(Op, oneshot::Sender<Result<Record>>)]) -> Vec<String> {
    let mut keys: Vec<String> = ops.iter().map(|(op, _)| op.key().to_owned()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// One event-log row: the event plus the mod revision of its previous value, which a list at
/// an older revision needs to rebuild that value's record.
#[derive(Clone, Debug)]
pub(crate) struct LogEntry {
    pub event: Event,
    pub prev_mod_revision: Option<Revision>,
}

/// The outcome of deciding a group of writes.
pub(crate) struct Plan {
    /// One result per write, in request order.
    pub results: Vec<Result<Record>>,
    /// New log rows, in revision order (revisions `base + 1 ..= last`).
    pub log: Vec<LogEntry>,
    /// Final state of each key some successful write touched: `Some` to upsert, `None` to
    /// delete.
    pub rows: BTreeMap<String, Option<Record>>,
    /// The revision after the group (`base` when every write failed).
    pub last: Revision,
}

/// Decide each write in order against `current` (every key of the group mapped to its row, or
/// absent), allocating revisions from `base + 1`. Render callbacks run here, once each, only
/// for writes whose precondition holds.
pub(crate) fn plan(base: Revision, ops: Vec<Op>, mut current: HashMap<String, Record>) -> Plan {
    let mut p = Plan {
        results: Vec::with_capacity(ops.len()),
        log: Vec::new(),
        rows: BTreeMap::new(),
        last: base,
    };
    for op in ops {
        let next = p.last + 1;
        let result = match op {
            Op::Create { key, render } if current.contains_key(&key) => {
                drop(render);
                Err(Error::AlreadyExists { key })
            }
            Op::Create { key, render } => render_at(&key, next, render)
                .map(|value| p.apply(&mut current, key, EventKind::Put, value, None)),
            Op::Update {
                key,
                expected,
                render,
            } => checked(&current, &key, expected).and_then(|prev| {
                render_at(&key, next, render)
                    .map(|value| p.apply(&mut current, key, EventKind::Put, value, Some(prev)))
            }),
            Op::Delete {
                key,
                expected,
                render,
            } => checked(&current, &key, expected).and_then(|prev| {
                render_at(&key, next, render).map(|tombstone| {
                    p.apply(&mut current, key, EventKind::Delete, tombstone, Some(prev))
                })
            }),
        };
        p.results.push(result);
    }
    p
}

impl Plan {
    /// Record a write whose precondition held at the next revision; `prev` is the key's
    /// record before it (`None` for a create). Returns the written (or tombstone) record.
    fn apply(
        &mut self,
        current: &mut HashMap<String, Record>,
        key: String,
        kind: EventKind,
        value: Bytes,
        prev: Option<Record>,
    ) -> Record {
        self.last += 1;
        let create_revision = prev.as_ref().map_or(self.last, |p| p.create_revision);
        let rec = Record {
            key,
            value,
            create_revision,
            mod_revision: self.last,
        };
        let (prev_value, prev_mod_revision) = match prev {
            Some(p) => (Some(p.value), Some(p.mod_revision)),
            None => (None, None),
        };
        let event = Event {
            revision: self.last,
            key: rec.key.clone(),
            kind,
            value: rec.value.clone(),
            prev_value,
            create_revision,
        };
        self.log.push(LogEntry {
            event,
            prev_mod_revision,
        });
        match kind {
            EventKind::Put => {
                current.insert(rec.key.clone(), rec.clone());
                self.rows.insert(rec.key.clone(), Some(rec.clone()));
            }
            EventKind::Delete => {
                current.remove(&rec.key);
                self.rows.insert(rec.key.clone(), None);
            }
        }
        rec
    }
}

fn checked(current: &HashMap<String, Record>, key: &str, expected: Revision) -> Result<Record> {
    match current.get(key) {
        None => Err(Error::NotFound {
            key: key.to_owned(),
        }),
        Some(cur) if cur.mod_revision == expected => Ok(cur.clone()),
        Some(cur) => Err(Error::Conflict {
            key: key.to_owned(),
            current: Some(cur.clone()),
        }),
    }
}

/// Run a render callback. It is caller code running inside the writer, so a panic must fail
/// that one write rather than kill the writer.
fn render_at(key: &str, revision: Revision, render: Render) -> Result<Bytes> {
    catch_unwind(AssertUnwindSafe(move || render.render(revision))).map_err(|_| {
        tracing::error!(key, "render callback panicked; failing that write");
        Error::RenderPanicked {
            key: key.to_owned(),
        }
    })
}

/// Answer every write of a committed (or failed) group.
pub(crate) fn answer(replies: Vec<oneshot::Sender<Result<Record>>>, results: Vec<Result<Record>>) {
    for (reply, result) in replies.into_iter().zip(results) {
        // The caller may have given up (dropped its future); the write stands regardless.
        let _ = reply.send(result);
    }
}

#[cfg(test)]
mod tests;
