//! The storage contract, as one suite run unchanged against every backend.
//!
//! `tests/sqlite.rs` and `tests/postgres.rs` call [`run_all`] with a factory of fresh, empty
//! store URLs. Each case opens its own store with [`Store::open`], so the suite also covers
//! opening; the durability case closes a store and reopens the *same* URL, which is why the
//! factory yields URLs rather than open stores.
//!
//! The suite panics on the first broken promise, with a message naming the case. It is test
//! code compiled into the library so that any future backend (CockroachDB, a remote store) can
//! be held to it from its own crate.

mod crud;
mod durability;
mod list;
mod spread;
mod watch;

use std::future::Future;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;

use crate::{Event, OpenOptions, Record, Render, Revision, Store, WatchStream};

/// Run every case, each against a store opened on a fresh URL from `fresh_url` (e.g. a new
/// file in a temporary directory, or a newly created PostgreSQL database). Runs on the
/// caller's tokio runtime; a multi-threaded one exercises the concurrency cases properly.
pub async fn run_all<F, Fut>(fresh_url: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = String>,
{
    run_all_with(fresh_url, OpenOptions::default()).await;
}

/// [`run_all`] with every store opened with `options`, e.g. as a replica of several
/// ([`OpenOptions::nats`]), where watches follow the database rather than the writer.
pub async fn run_all_with<F, Fut>(fresh_url: F, options: OpenOptions)
where
    F: Fn() -> Fut,
    Fut: Future<Output = String>,
{
    *OPTIONS.lock() = (options, false);
    cases(fresh_url).await;
}

/// [`run_all`] with every store two replicas of one database sharing NATS at `nats`, every
/// other write going through the second while reads and watches are on the first.
pub async fn run_all_spread<F, Fut>(fresh_url: F, nats: &str)
where
    F: Fn() -> Fut,
    Fut: Future<Output = String>,
{
    let options = OpenOptions {
        nats: Some(nats.to_owned()),
        ..OpenOptions::default()
    };
    *OPTIONS.lock() = (options, true);
    cases(fresh_url).await;
}

async fn cases<F, Fut>(fresh_url: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = String>,
{
    macro_rules! case {
        ($name:literal, $f:expr) => {{
            eprintln!("conformance: {} ...", $name);
            let started = std::time::Instant::now();
            $f(fresh_url().await).await;
            eprintln!("conformance: {} ok ({:.2?})", $name, started.elapsed());
        }};
    }
    case!("crud", crud::basics);
    case!("values and keys", crud::values_and_keys);
    case!("revisions strictly increasing", crud::revisions_increase);
    case!("group commit isolates failures", crud::group_commit);
    case!("prefix lists", list::prefixes);
    case!("pagination over a snapshot", list::pagination);
    case!("lists at old revisions", list::history);
    case!("compacted and future revisions", list::compaction);
    case!("watch tombstones", watch::tombstones);
    case!("watch replay then live", watch::replay_then_live);
    case!("watch behind the broadcast", watch::lagging);
    case!("watch from before compaction", watch::compacted);
    // Closing is one process's promise (its writes finish, then everything answers Closed);
    // writes through a second, open replica would rightly go on.
    if OPTIONS.lock().1 {
        eprintln!("conformance: close: not run with writes spread over two replicas");
    } else {
        case!("close", durability::close);
    }
    case!("reopen", durability::reopen);
    case!("auto compaction", durability::auto_compaction);
}

// === helpers shared by the cases ===

/// How the cases open stores (set by [`run_all_with`] and [`run_all_spread`]): the options,
/// and whether each store is two replicas with the writes spread over them.
static OPTIONS: parking_lot::Mutex<(OpenOptions, bool)> = parking_lot::Mutex::new((
    OpenOptions {
        nats: None,
        durability: crate::Durability::Full,
    },
    false,
));

/// Open a store on `url`, or panic saying so.
async fn open(url: &str) -> Store {
    let (options, spread) = OPTIONS.lock().clone();
    let open = || async {
        match Store::open_with(url, options.clone()).await {
            Ok(s) => s,
            Err(e) => panic!(
                "opening the store failed: {e} ({:?})",
                std::error::Error::source(&e)
            ),
        }
    };
    if spread {
        spread::spread(open().await, open().await)
    } else {
        open().await
    }
}

/// A render stamping the revision into the value, as the API server stamps resourceVersion.
fn stamp(tag: &str) -> Render {
    let tag = tag.to_owned();
    Render::splice(format!("{tag}@"), Bytes::new())
}

/// A render that must never be called (the write's precondition fails).
fn never() -> Render {
    Render::with(|_| panic!("render called for a write whose precondition failed"))
}

fn text(b: &Bytes) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Await `f`, failing the case if it takes longer than `secs`.
async fn within<T>(secs: u64, what: &str, f: impl Future<Output = T>) -> T {
    match tokio::time::timeout(Duration::from_secs(secs), f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: still waiting after {secs}s"),
    }
}

/// Collect events from `stream` until one at `until` arrives.
async fn collect_until(stream: &mut WatchStream, until: Revision) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::new();
    within(60, "watch catching up", async {
        while out.last().is_none_or(|e| e.revision < until) {
            match stream.next().await {
                Some(Ok(ev)) => out.push(ev),
                Some(Err(e)) => panic!("watch failed after {} events: {e}", out.len()),
                None => panic!("watch ended after {} events", out.len()),
            }
        }
    })
    .await;
    out
}

/// Assert revisions run `from + 1, from + 2, …` with no gap or repeat.
fn assert_consecutive(events: &[Event], from: Revision) {
    for (i, e) in events.iter().enumerate() {
        let want = from + 1 + i as Revision;
        assert_eq!(
            e.revision, want,
            "event {i} of a watch from {from}: gap or duplicate"
        );
    }
}

/// Records as comparable tuples.
fn rows(records: &[Record]) -> Vec<(String, String, Revision, Revision)> {
    records
        .iter()
        .map(|r| {
            (
                r.key.clone(),
                text(&r.value),
                r.create_revision,
                r.mod_revision,
            )
        })
        .collect()
}
