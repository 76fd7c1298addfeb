//! Several stores on one PostgreSQL database, as hub replicas run: each opened with NATS, each
//! writing, each watching. On a real PostgreSQL (`FLOTILLA_TEST_POSTGRES_URL`; scripts/test
//! starts it) and a real nats-server (started here).
//!
//! The promise under test: a watch on any replica carries every commit of every replica, in
//! revision order, exactly once; a read that must be current sees writes acknowledged by
//! another replica; and when the announcements are lost (NATS gone), nothing else is.

mod support;

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;

use flotilla_store::{Event, OpenOptions, Revision, Store, WatchStream};
use support::{Database, Nats};

async fn replica(url: &str, nats: &str) -> Store {
    Store::open_with(
        url,
        OpenOptions {
            nats: Some(nats.to_owned()),
            ..OpenOptions::default()
        },
    )
    .await
    .expect("open a replica")
}

fn value(tag: &str) -> flotilla_store::Render {
    let tag = tag.to_owned();
    flotilla_store::Render::splice(format!("{tag}@"), Bytes::new())
}

/// Take events from `watch` until one at `until`, failing after `secs`.
async fn collect(watch: &mut WatchStream, until: Revision, secs: u64) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::new();
    let got = tokio::time::timeout(Duration::from_secs(secs), async {
        while out.last().is_none_or(|e| e.revision < until) {
            match watch.next().await {
                Some(Ok(e)) => out.push(e),
                Some(Err(e)) => panic!("watch failed after {} events: {e}", out.len()),
                None => panic!("watch ended after {} events", out.len()),
            }
        }
    })
    .await;
    assert!(
        got.is_ok(),
        "the watch had {} events (last {:?}) after {secs}s, waiting for revision {until}",
        out.len(),
        out.last().map(|e| e.revision)
    );
    out
}

/// Revisions `from + 1, from + 2, …`, each once.
fn assert_consecutive(events: &[Event], from: Revision, who: &str) {
    for (i, e) in events.iter().enumerate() {
        assert_eq!(
            e.revision,
            from + 1 + i as Revision,
            "{who}: event {i} breaks the sequence (gap or duplicate)"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_replica_watches_every_commit_in_order_once() {
    support::init_tracing();
    let server = support::env(support::PLAIN);
    let db = Database::create(&server, "replicas", None).await;
    let nats = Nats::start();
    let stores = [
        replica(&db.url(), &nats.url).await,
        replica(&db.url(), &nats.url).await,
        replica(&db.url(), &nats.url).await,
    ];
    // Four writers per replica, interleaving: creates, then an update of each key. The
    // watchers follow live while they write (a watch read only afterwards would replay the log
    // and prove nothing about the live feed).
    let per_writer = 60;
    let total = 3 * 4 * per_writer as Revision * 2;
    let watchers: Vec<_> = stores
        .iter()
        .map(|s| {
            let mut watch = s.watch(0);
            tokio::spawn(async move { collect(&mut watch, total, 90).await })
        })
        .collect();
    let mut tasks = Vec::new();
    for (r, store) in stores.iter().enumerate() {
        for w in 0..4 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                let mut acked = Vec::new();
                for i in 0..per_writer {
                    let key = format!("/k/{r}/{w}/{i}");
                    let rec = store.create(&key, value("v1")).await.expect("create");
                    let rec = store
                        .update(&key, rec.mod_revision, value("v2"))
                        .await
                        .expect("update");
                    acked.push(rec);
                }
                acked
            }));
        }
    }
    let mut acked = HashMap::new();
    for t in tasks {
        for rec in t.await.expect("writer task") {
            acked.insert(rec.key.clone(), rec);
        }
    }
    for (i, watcher) in watchers.into_iter().enumerate() {
        let events = watcher.await.expect("watcher task");
        assert_consecutive(&events, 0, &format!("replica {i}"));
        assert_eq!(events.len() as Revision, total, "replica {i}: event count");
        // Each acknowledged write is the event at its revision.
        let by_rev: HashMap<Revision, &Event> = events.iter().map(|e| (e.revision, e)).collect();
        for rec in acked.values() {
            let e = by_rev[&rec.mod_revision];
            assert_eq!(e.key, rec.key, "replica {i}: event at {}", rec.mod_revision);
            assert_eq!(
                e.value, rec.value,
                "replica {i}: value at {}",
                rec.mod_revision
            );
        }
    }
    // Reads that must be current see every write, whoever made it.
    for (i, store) in stores.iter().enumerate() {
        let current = store.current_revision().await.expect("current revision");
        assert_eq!(current, total, "replica {i}: current_revision");
    }
    for s in &stores {
        s.close().await;
    }
    db.drop_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commits_arrive_without_nats_and_a_late_watch_resumes_anywhere() {
    support::init_tracing();
    let server = support::env(support::PLAIN);
    let db = Database::create(&server, "replicas_nonats", None).await;
    let mut nats = Nats::start();
    let a = replica(&db.url(), &nats.url).await;
    let b = replica(&db.url(), &nats.url).await;
    let mut on_a = a.watch(0);
    // The watch is live (its replay of the empty log is done) before b writes.
    let live = tokio::spawn(async move {
        let first = collect(&mut on_a, 1, 10).await;
        (on_a, first)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    b.create("/x/1", value("one"))
        .await
        .expect("create through b");
    let (on_a, first) = live.await.expect("watch task");
    assert_eq!(first[0].key, "/x/1");

    // With NATS gone, announcements are lost: replicas still learn of commits by polling the
    // counter, and a replica's own commit after a hole is held until the hole is filled.
    nats.kill();
    let mut on_a = on_a;
    let live = tokio::spawn(async move { collect(&mut on_a, 21, 15).await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut last = 1;
    for i in 0..20 {
        let store = if i % 2 == 0 { &b } else { &a };
        last = store
            .create(&format!("/x/n{i}"), value("n"))
            .await
            .expect("create without NATS")
            .mod_revision;
    }
    assert_eq!(last, 21);
    let rest = live.await.expect("watch task");
    assert_consecutive(&rest, 1, "replica a without NATS");

    // A watcher that was on b resumes on a from its last revision, missing nothing.
    let mut on_b = b.watch(0);
    let seen = collect(&mut on_b, 5, 10).await;
    drop(on_b);
    b.close().await;
    let mut resumed = a.watch(seen.last().expect("events").revision);
    let after = collect(&mut resumed, last, 10).await;
    assert_consecutive(&after, 5, "resumed on a");
    a.close().await;
    db.drop_now().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_suite_holds_for_a_replica() {
    support::init_tracing();
    let server = support::env(support::PLAIN);
    let nats = Nats::start();
    let created = std::sync::Mutex::new(Vec::new());
    flotilla_store::conformance::run_all_with(
        || async {
            let db = Database::create(&server, "replica_conf", None).await;
            let url = db.url();
            created.lock().unwrap().push(db);
            url
        },
        OpenOptions {
            nats: Some(nats.url.clone()),
            ..OpenOptions::default()
        },
    )
    .await;
    let dbs: Vec<Database> = std::mem::take(&mut *created.lock().unwrap());
    for db in dbs {
        db.drop_now().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_conformance_suite_holds_with_writes_spread_over_two_replicas() {
    support::init_tracing();
    let server = support::env(support::PLAIN);
    let nats = Nats::start();
    let created = std::sync::Mutex::new(Vec::new());
    flotilla_store::conformance::run_all_spread(
        || async {
            let db = Database::create(&server, "replica_spread", None).await;
            let url = db.url();
            created.lock().unwrap().push(db);
            url
        },
        &nats.url,
    )
    .await;
    let dbs: Vec<Database> = std::mem::take(&mut *created.lock().unwrap());
    for db in dbs {
        db.drop_now().await;
    }
}

/// Wait until exactly one of `stores` is the writer of record; its index.
async fn writer_of_record(stores: &[&Store], secs: u64) -> usize {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let holders: Vec<usize> = (0..stores.len())
            .filter(|i| {
                stores[*i]
                    .replica_stats()
                    .expect("a replica has replica stats")
                    .writer_of_record
            })
            .collect();
        if holders.len() == 1 {
            return holders[0];
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "after {secs}s the writers of record are {holders:?}, not exactly one"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_replica_commits_for_all_and_another_takes_over() {
    support::init_tracing();
    let server = support::env(support::PLAIN);
    let db = Database::create(&server, "replicas_writer", None).await;
    let nats = Nats::start();
    let mut stores = vec![
        replica(&db.url(), &nats.url).await,
        replica(&db.url(), &nats.url).await,
        replica(&db.url(), &nats.url).await,
    ];
    let holder = writer_of_record(&stores.iter().collect::<Vec<_>>(), 5).await;

    // The others hand their writes over (once their NATS connections are up: until then they
    // commit their own); each answer is the record as stored.
    let mut warm = 0;
    for (i, store) in stores.iter().enumerate().filter(|(i, _)| *i != holder) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while store.replica_stats().expect("stats").handed_on == 0 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "replica {i} hands nothing on"
            );
            warm += 1;
            store
                .create(&format!("/warm/{i}/{warm}"), value("warm"))
                .await
                .expect("a warm-up create");
        }
    }
    let mut on_holder = stores[holder].watch(warm);
    let mut tasks = Vec::new();
    for (i, store) in stores.iter().enumerate().filter(|(i, _)| *i != holder) {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            let before = store.replica_stats().expect("stats").handed_on;
            let mut recs = Vec::new();
            for n in 0..100 {
                let rec = store
                    .create(&format!("/w/{i}/{n}"), value("v"))
                    .await
                    .expect("a handed-on create");
                recs.push(rec);
            }
            (
                store.replica_stats().expect("stats").handed_on - before,
                recs,
            )
        }));
    }
    let mut acked = Vec::new();
    for t in tasks {
        let (handed_on, recs) = t.await.expect("writer task");
        assert_eq!(handed_on, 100, "every write of a replica was handed on");
        acked.extend(recs);
    }
    let events = collect(&mut on_holder, warm + 200, 20).await;
    assert_consecutive(&events, warm, "the writer of record");
    for rec in &acked {
        assert_eq!(rec.value, Bytes::from(format!("v@{}", rec.mod_revision)));
        let e = &events[(rec.mod_revision - warm) as usize - 1];
        assert_eq!((&e.key, &e.value), (&rec.key, &rec.value));
    }

    // Preconditions are checked where the write is committed, and come back whole.
    let other = (holder + 1) % 3;
    let first = &acked[0];
    let err = stores[other]
        .create(&first.key, value("again"))
        .await
        .expect_err("a second create");
    assert!(
        matches!(err, flotilla_store::Error::AlreadyExists { .. }),
        "{err}"
    );
    match stores[other]
        .update(&first.key, first.mod_revision - 1, value("stale"))
        .await
    {
        Err(flotilla_store::Error::Conflict {
            current: Some(cur), ..
        }) => assert_eq!(&cur, first),
        other => panic!("a stale update: {other:?}"),
    }

    // The writer of record goes: the others keep writing (themselves, until one of them takes
    // over), and nothing acknowledged is lost.
    let gone = stores.remove(holder);
    gone.close().await;
    drop(gone);
    let mut last = 0;
    for n in 0..40 {
        let store = &stores[n % 2];
        last = store
            .create(&format!("/after/{n}"), value("after"))
            .await
            .expect("a create while the writer of record changes")
            .mod_revision;
    }
    assert_eq!(last, warm + 240, "every write committed once");
    writer_of_record(&stores.iter().collect::<Vec<_>>(), 10).await;
    for s in &stores {
        s.close().await;
    }
    db.drop_now().await;
}
