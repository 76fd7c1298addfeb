//! Watches: replay then live, under concurrent writers and lag, and against compaction.

use std::collections::HashMap;
use std::time::Duration;

use futures::StreamExt;

use super::{assert_consecutive, collect_until, open, stamp, text, within};
use crate::{Error, EventKind, Revision};

pub(super) async fn tombstones(url: String) {
    let s = open(&url).await;
    s.create("/t", stamp("v1")).await.expect("create");
    s.update("/t", 1, stamp("v2")).await.expect("update");
    s.delete("/t", 2, stamp("tomb")).await.expect("delete");
    let events = collect_until(&mut s.watch(0), 3).await;
    let got: Vec<_> = events
        .iter()
        .map(|e| {
            let prev = e.prev_value.as_ref().map(text);
            (e.revision, e.kind, text(&e.value), prev, e.create_revision)
        })
        .collect();
    assert_eq!(
        got,
        [
            (1, EventKind::Put, "v1@1".into(), None, 1),
            (2, EventKind::Put, "v2@2".into(), Some("v1@1".into()), 1),
            (
                3,
                EventKind::Delete,
                "tomb@3".into(),
                Some("v2@2".into()),
                1
            ),
        ],
        "events carry new values, previous values, and the tombstone"
    );
    s.close().await;
}

/// Watchers started before, during and after a storm of concurrent writes all see every write
/// once, in revision order.
pub(super) async fn replay_then_live(url: String) {
    let s = open(&url).await;
    for i in 0..100 {
        s.create(&format!("/w/seed{i}"), stamp("seed"))
            .await
            .expect("seed");
    }
    let mut from_zero = s.watch(0);
    let mut from_fifty = s.watch(50);
    let writers: Vec<_> = (0..8)
        .map(|t| {
            let s = s.clone();
            tokio::spawn(async move {
                let key = format!("/w/{t}");
                let mut done = Vec::new();
                let mut cur = s.create(&key, stamp("c")).await.expect("create");
                done.push((
                    cur.mod_revision,
                    key.clone(),
                    EventKind::Put,
                    text(&cur.value),
                ));
                for i in 1..200 {
                    if i % 50 == 0 {
                        let t = s
                            .delete(&key, cur.mod_revision, stamp("d"))
                            .await
                            .expect("del");
                        done.push((
                            t.mod_revision,
                            key.clone(),
                            EventKind::Delete,
                            text(&t.value),
                        ));
                        cur = s.create(&key, stamp("c")).await.expect("recreate");
                        done.push((
                            cur.mod_revision,
                            key.clone(),
                            EventKind::Put,
                            text(&cur.value),
                        ));
                    } else {
                        cur = s
                            .update(&key, cur.mod_revision, stamp("u"))
                            .await
                            .expect("update");
                        done.push((
                            cur.mod_revision,
                            key.clone(),
                            EventKind::Put,
                            text(&cur.value),
                        ));
                    }
                }
                done
            })
        })
        .collect();
    within(60, "writers reaching the middle", async {
        while s.revision() < 900 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await;
    let middle = s.revision();
    let mut from_middle = s.watch(middle);
    let mut written = HashMap::new();
    for w in writers {
        for (rev, key, kind, value) in within(120, "writers", w).await.expect("writer task") {
            written.insert(rev, (key, kind, value));
        }
    }
    let last = s.revision();
    assert_eq!(last, 100 + written.len() as Revision);

    let all = collect_until(&mut from_zero, last).await;
    assert_consecutive(&all, 0);
    for e in &all[100..] {
        let want = written.get(&e.revision).expect("event for a write");
        assert_eq!(
            (&e.key, e.kind, text(&e.value)),
            (&want.0, want.1, want.2.clone())
        );
    }
    for (from, stream) in [(50, &mut from_fifty), (middle, &mut from_middle)] {
        let events = collect_until(stream, last).await;
        assert_consecutive(&events, from);
        assert_eq!(
            events,
            all[from as usize..],
            "watch from {from} sees the same history"
        );
    }
    let extra = tokio::time::timeout(Duration::from_millis(200), from_zero.next()).await;
    assert!(extra.is_err(), "no event after the last write: {extra:?}");
    s.close().await;
}

/// A watcher that does not read while many commits happen falls behind the live feed and must
/// catch up from the log without losing or repeating anything.
pub(super) async fn lagging(url: String) {
    let s = open(&url).await;
    s.create("/l/first", stamp("v")).await.expect("create");
    let mut w = s.watch(0);
    collect_until(&mut w, 1).await;
    // Let it finish replaying and wait on the live feed, then stop reading.
    let idle = tokio::time::timeout(Duration::from_millis(100), w.next()).await;
    assert!(idle.is_err(), "no event before the next write: {idle:?}");
    let mut r = s.create("/l/k", stamp("v")).await.expect("create");
    for i in 0..1500 {
        r = s
            .update("/l/k", r.mod_revision, stamp(&format!("v{i}")))
            .await
            .expect("update");
    }
    let events = collect_until(&mut w, r.mod_revision).await;
    assert_consecutive(&events, 1);
    s.close().await;
}

pub(super) async fn compacted(url: String) {
    let s = open(&url).await;
    for i in 0..10 {
        s.create(&format!("/x/{i}"), stamp("v"))
            .await
            .expect("create");
    }
    s.compact(5).await.expect("compact");
    for from in [3, 4] {
        let mut w = s.watch(from);
        match within(10, "watch below compaction", w.next()).await {
            Some(Err(Error::Compacted {
                requested,
                compacted: 5,
            })) => assert_eq!(requested, from),
            other => panic!("watch from {from} after compaction to 5: got {other:?}"),
        }
        assert!(
            within(10, "end of watch", w.next()).await.is_none(),
            "Compacted ends the watch"
        );
    }
    let events = collect_until(&mut s.watch(5), 10).await;
    assert_consecutive(&events, 5);
    s.close().await;
}
