//! Commits whose outcome is lost with the connection, and watches across a database outage,
//! on a real PostgreSQL (`FLOTILLA_TEST_POSTGRES_URL`; scripts/test starts it) behind a proxy
//! that cuts the connection at the COMMIT of the store's write transaction.
//!
//! The promise under test: watchers see every committed revision, in order, with no hole,
//! whatever happened to the connection; the writer is told the truth (committed, rolled back,
//! or, only while the database cannot be asked, unknown).

mod support;

use std::time::Duration;

use futures::StreamExt;

use flotilla_store::{Error, Revision, Store, WatchStream};
use support::proxy::{Cut, Proxy};
use support::Database;

/// A store on a fresh database, reached through a proxy.
async fn behind_proxy(tag: &str) -> (Store, Proxy, Database) {
    support::init_tracing();
    let server = support::env(support::PLAIN);
    let db = Database::create(&server, tag, None).await;
    let (host, port) = support::address(&server);
    let upstream = tokio::net::lookup_host((host.as_str(), port))
        .await
        .expect("resolving the test server")
        .next()
        .expect("an address for the test server");
    let proxy = Proxy::start(upstream).await;
    let url = format!(
        "postgres://postgres@{}/{}?sslmode=disable",
        proxy.addr(),
        db.name
    );
    let store = Store::open(&url)
        .await
        .expect("open the store through the proxy");
    (store, proxy, db)
}

fn value(s: &str) -> flotilla_store::Render {
    let s = s.to_owned();
    flotilla_store::Render::fixed(s)
}

/// The next `n` events as (revision, key), or a panic naming what arrived.
async fn next_events(watch: &mut WatchStream, n: usize) -> Vec<(Revision, String)> {
    let mut got = Vec::new();
    while got.len() < n {
        match tokio::time::timeout(Duration::from_secs(15), watch.next()).await {
            Ok(Some(Ok(ev))) => got.push((ev.revision, ev.key)),
            Ok(Some(Err(e))) => panic!("the watch failed after {got:?}: {e}"),
            Ok(None) => panic!("the watch ended after {got:?}"),
            Err(_) => panic!("no event in 15 s; the watch has delivered only {got:?}"),
        }
    }
    got
}

/// A watch from the current revision that has finished replaying the (empty) rest of the
/// log and follows the writer's broadcast, so only what the writer hands out reaches it.
async fn live_watch(store: &Store) -> WatchStream {
    let mut watch = store.watch(store.revision());
    // Polling drives the replay; it ends at once (nothing after the current revision) and
    // leaves the watch waiting live. Nothing is written meanwhile, so nothing may arrive.
    if let Ok(ev) = tokio::time::timeout(Duration::from_secs(1), watch.next()).await {
        panic!("nothing was written, yet the watch yielded {ev:?}");
    }
    watch
}

/// Wait until the store's revision counter reaches `rev`.
async fn revision_reaches(store: &Store, rev: Revision) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while store.revision() < rev {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the store's revision is still {}, not {rev}",
            store.revision()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn revs(pairs: &[(Revision, &str)]) -> Vec<(Revision, String)> {
    pairs.iter().map(|(r, k)| (*r, (*k).to_owned())).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_lost_after_it_committed_reaches_watchers_and_its_writer() {
    let (store, proxy, db) = behind_proxy("lost_after").await;
    store
        .create("/k/1", value("one"))
        .await
        .expect("first write");
    let mut watch = live_watch(&store).await;

    proxy.cut_next_commit(Cut::AfterCommit);
    let lost = store.create("/k/2", value("two")).await;
    assert_eq!(
        proxy.tripped(),
        1,
        "the proxy never saw the writer's COMMIT"
    );

    // Watchers get the committed revision without waiting for another write to reveal it.
    assert_eq!(next_events(&mut watch, 1).await, revs(&[(2, "/k/2")]));
    let rec = lost.expect("the lost COMMIT had committed: its writer must be told it succeeded");
    assert_eq!((rec.key.as_str(), rec.mod_revision), ("/k/2", 2));
    assert_eq!(store.revision(), 2);

    store
        .create("/k/3", value("three"))
        .await
        .expect("write after the loss");
    assert_eq!(next_events(&mut watch, 1).await, revs(&[(3, "/k/3")]));
    store.close().await;
    db.drop_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_lost_before_the_server_saw_it_is_reported_rolled_back() {
    let (store, proxy, db) = behind_proxy("lost_before").await;
    store
        .create("/k/1", value("one"))
        .await
        .expect("first write");
    let mut watch = live_watch(&store).await;

    proxy.cut_next_commit(Cut::BeforeCommit);
    let lost = store.create("/k/2", value("two")).await;
    assert_eq!(
        proxy.tripped(),
        1,
        "the proxy never saw the writer's COMMIT"
    );
    assert!(
        matches!(lost, Err(Error::CommitTxn { .. })),
        "a transaction the server never committed is a definite failure, got {lost:?}"
    );
    assert_eq!(store.get("/k/2").await.expect("read"), None);

    let rec = store
        .create("/k/3", value("three"))
        .await
        .expect("write after the loss");
    assert_eq!(rec.mod_revision, 2, "the rolled-back revision is reused");
    assert_eq!(next_events(&mut watch, 1).await, revs(&[(2, "/k/3")]));
    store.close().await;
    db.drop_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_commit_lost_with_the_database_is_unknown_then_delivered_when_it_returns() {
    let (store, proxy, db) = behind_proxy("lost_down").await;
    store
        .create("/k/1", value("one"))
        .await
        .expect("first write");
    let mut watch = live_watch(&store).await;

    proxy.cut_next_commit(Cut::AfterCommitThenDown);
    let lost = store.create("/k/2", value("two")).await;
    assert_eq!(
        proxy.tripped(),
        1,
        "the proxy never saw the writer's COMMIT"
    );
    assert!(
        matches!(lost, Err(Error::CommitUnknown { .. })),
        "with the database unreachable the outcome cannot be known, got {lost:?}"
    );

    // The database comes back; with no further write, the writer learns what committed and
    // watchers get it.
    proxy.up();
    assert_eq!(next_events(&mut watch, 1).await, revs(&[(2, "/k/2")]));
    revision_reaches(&store, 2).await;
    let rec = store
        .create("/k/3", value("three"))
        .await
        .expect("write after the outage");
    assert_eq!(rec.mod_revision, 3);
    assert_eq!(next_events(&mut watch, 1).await, revs(&[(3, "/k/3")]));
    store.close().await;
    db.drop_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_waits_out_a_database_outage() {
    let (store, proxy, db) = behind_proxy("outage").await;
    for k in ["/k/1", "/k/2", "/k/3"] {
        store.create(k, value(k)).await.expect("write");
    }
    proxy.down();
    // Replaying the log needs the database, which is away for a while.
    let mut watch = store.watch(0);
    let back = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        proxy.up();
        proxy
    });
    assert_eq!(
        next_events(&mut watch, 3).await,
        revs(&[(1, "/k/1"), (2, "/k/2"), (3, "/k/3")])
    );
    let _proxy = back.await.expect("proxy task");
    store
        .create("/k/4", value("four"))
        .await
        .expect("write after the outage");
    assert_eq!(next_events(&mut watch, 1).await, revs(&[(4, "/k/4")]));
    store.close().await;
    db.drop_now().await;
}
