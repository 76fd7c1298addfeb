//! Lists: prefixes, pagination over one snapshot, history, compaction.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::{open, rows, stamp, within};
use crate::{Error, ListOptions, Record, Revision, Store};

fn at(revision: Option<Revision>, start_after: Option<&str>, limit: Option<usize>) -> ListOptions {
    ListOptions {
        revision,
        start_after: start_after.map(str::to_owned),
        limit,
    }
}

fn keys(records: &[Record]) -> Vec<&str> {
    records.iter().map(|r| r.key.as_str()).collect()
}

pub(super) async fn prefixes(url: String) {
    let s = open(&url).await;
    for k in ["/b/1", "/a/2", "/ab/x", "/a", "/a/1", "/a/é", "/a/Z", "/a0"] {
        s.create(k, stamp(k)).await.expect("create");
    }
    let l = s.list("/a/", ListOptions::default()).await.expect("list");
    assert_eq!(
        keys(&l.records),
        ["/a/1", "/a/2", "/a/Z", "/a/é"],
        "prefix /a/, byte order"
    );
    assert_eq!((l.revision, l.more, l.remaining), (s.revision(), false, 0));
    let all = s.list("", ListOptions::default()).await.expect("list all");
    assert_eq!(
        keys(&all.records),
        ["/a", "/a/1", "/a/2", "/a/Z", "/a/é", "/a0", "/ab/x", "/b/1"],
        "the empty prefix lists everything"
    );
    assert!(s
        .list("/c/", ListOptions::default())
        .await
        .expect("list")
        .records
        .is_empty());
    let one = s
        .list("/a/", at(None, Some("/a/1"), Some(1)))
        .await
        .expect("page");
    assert_eq!(
        (keys(&one.records), one.more, one.remaining),
        (vec!["/a/2"], true, 2)
    );
    let before = s
        .list("/b/", at(None, Some("/a/zzz"), None))
        .await
        .expect("start before");
    assert_eq!(
        keys(&before.records),
        ["/b/1"],
        "a start key before the prefix changes nothing"
    );
    s.close().await;
}

/// Page through a snapshot while writers change every key in it.
pub(super) async fn pagination(url: String) {
    let s = open(&url).await;
    for i in 0..100 {
        s.create(&format!("/p/{i:03}"), stamp("orig"))
            .await
            .expect("seed");
    }
    s.create("/p0", stamp("outside")).await.expect("seed");
    let want = s.list("/p/", ListOptions::default()).await.expect("list");
    let first = s
        .list("/p/", at(None, None, Some(10)))
        .await
        .expect("first page");
    assert_eq!(
        (first.records.len(), first.more, first.remaining),
        (10, true, 90)
    );
    let snapshot = first.revision;

    let stop = Arc::new(AtomicBool::new(false));
    let writer = tokio::spawn(churn(s.clone(), stop.clone()));
    within(60, "churn starting", async {
        while s.revision() < snapshot + 10 {
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
    })
    .await;
    let mut got = first.records;
    loop {
        let last = got.last().map(|r| r.key.clone());
        let page = s
            .list("/p/", at(Some(snapshot), last.as_deref(), Some(7)))
            .await
            .expect("page");
        assert_eq!(
            page.revision, snapshot,
            "later pages are served at the first page's revision"
        );
        got.extend(page.records);
        assert_eq!(
            page.remaining as usize,
            100 - got.len(),
            "remaining counts what is left"
        );
        if !page.more {
            break;
        }
        tokio::task::yield_now().await;
    }
    stop.store(true, Ordering::Release);
    let churned = within(60, "churn writer", writer)
        .await
        .expect("writer task");
    assert!(churned > 0, "the writer ran while paging");
    assert_eq!(
        rows(&got),
        rows(&want.records),
        "the pages add up to the snapshot"
    );
    let now = s.list("/p/", ListOptions::default()).await.expect("list");
    assert_ne!(
        rows(&now.records),
        rows(&want.records),
        "the latest list sees the churn"
    );
    s.close().await;
}

async fn churn(s: Store, stop: Arc<AtomicBool>) -> usize {
    let mut n = 0;
    for i in (0..100).cycle() {
        if stop.load(Ordering::Acquire) {
            break;
        }
        let key = format!("/p/{i:03}");
        match s.get(&key).await.expect("get") {
            Some(r) if i % 3 == 0 => s
                .delete(&key, r.mod_revision, stamp("tomb"))
                .await
                .map(drop),
            Some(r) => s
                .update(&key, r.mod_revision, stamp("churned"))
                .await
                .map(drop),
            None => s.create(&key, stamp("again")).await.map(drop),
        }
        .expect("churn write");
        s.create(&format!("/p/{i:03}-{n}"), stamp("new"))
            .await
            .expect("churn create");
        n += 1;
    }
    n
}

/// Every revision's list matches a model of the history, whole and paged.
pub(super) async fn history(url: String) {
    let s = open(&url).await;
    let mut model: BTreeMap<String, Record> = BTreeMap::new();
    let mut snapshots = vec![model.clone()];
    let mut seed = 7u64;
    s.create("/hx", stamp("outside the prefix"))
        .await
        .expect("create");
    snapshots.push(model.clone());
    for i in 0..150 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let key = format!("/h/{}", (seed >> 33) % 6);
        let tag = format!("w{i}");
        // One in three writes to a present key deletes it.
        let roll = (seed >> 40) % 3;
        let rec = match model.get(&key) {
            Some(cur) if roll == 0 => {
                let t = s
                    .delete(&key, cur.mod_revision, stamp(&tag))
                    .await
                    .expect("delete");
                model.remove(&key);
                t
            }
            Some(cur) => {
                let r = s
                    .update(&key, cur.mod_revision, stamp(&tag))
                    .await
                    .expect("update");
                model.insert(key, r.clone());
                r
            }
            None => {
                let r = s.create(&key, stamp(&tag)).await.expect("create");
                model.insert(key, r.clone());
                r
            }
        };
        assert_eq!(rec.mod_revision as usize, snapshots.len());
        snapshots.push(model.clone());
    }
    for (rev, snap) in snapshots.iter().enumerate() {
        let rev = rev as Revision;
        let want: Vec<Record> = snap.values().cloned().collect();
        let whole = s
            .list("/h/", at(Some(rev), None, None))
            .await
            .expect("list at revision");
        assert_eq!(whole.revision, rev);
        assert_eq!(rows(&whole.records), rows(&want), "state at revision {rev}");
        let mut paged = Vec::new();
        loop {
            let after = paged.last().map(|r: &Record| r.key.clone());
            let p = s
                .list("/h/", at(Some(rev), after.as_deref(), Some(2)))
                .await
                .expect("page");
            assert_eq!(
                p.remaining as usize,
                want.len() - paged.len() - p.records.len()
            );
            paged.extend(p.records);
            if !p.more {
                break;
            }
        }
        assert_eq!(rows(&paged), rows(&want), "paged state at revision {rev}");
    }
    s.close().await;
}

pub(super) async fn compaction(url: String) {
    let s = open(&url).await;
    for i in 0..10 {
        s.create(&format!("/c/{i}"), stamp("v"))
            .await
            .expect("create");
    }
    s.update("/c/0", 1, stamp("changed")).await.expect("update");
    s.delete("/c/1", 2, stamp("tomb")).await.expect("delete");
    let at5 = s
        .list("/c/", at(Some(5), None, None))
        .await
        .expect("list at 5");
    match s.list("/c/", at(Some(13), None, None)).await {
        Err(Error::FutureRevision {
            requested: 13,
            current: 12,
        }) => {}
        other => panic!("list in the future: want FutureRevision, got {other:?}"),
    }
    s.compact(5).await.expect("compact");
    assert_eq!(s.compacted_revision(), 5);
    match s.list("/c/", at(Some(4), None, None)).await {
        Err(Error::Compacted {
            requested: 4,
            compacted: 5,
        }) => {}
        other => panic!("list below compaction: want Compacted, got {other:?}"),
    }
    let still = s
        .list("/c/", at(Some(5), None, None))
        .await
        .expect("list at the compacted rev");
    assert_eq!(
        rows(&still.records),
        rows(&at5.records),
        "history after compaction is intact"
    );
    s.compact(3).await.expect("compacting below is a no-op");
    assert_eq!(s.compacted_revision(), 5);
    assert!(matches!(
        s.compact(13).await,
        Err(Error::FutureRevision { .. })
    ));
    s.compact(12).await.expect("compact to current");
    assert!(matches!(
        s.list("/c/", at(Some(11), None, None)).await,
        Err(Error::Compacted { .. })
    ));
    let latest = s
        .list("/c/", ListOptions::default())
        .await
        .expect("latest list");
    assert_eq!(latest.records.len(), 9, "compaction keeps current objects");
    assert_eq!(
        s.get("/c/0")
            .await
            .expect("get")
            .expect("present")
            .mod_revision,
        11
    );
    s.close().await;
}
