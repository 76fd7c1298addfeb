//! Create, read, update, delete: preconditions, revisions, values, and group commit.

use std::collections::BTreeSet;

use bytes::Bytes;

use super::{never, open, stamp, text, within};
use crate::{Error, Render, Revision};

pub(super) async fn basics(url: String) {
    let s = open(&url).await;
    assert_eq!(s.revision(), 0, "an empty store is at revision 0");
    assert_eq!(s.compacted_revision(), 0);
    assert!(s.get("/k").await.expect("get").is_none());

    let c = s.create("/k", stamp("v1")).await.expect("create");
    assert_eq!(
        (c.create_revision, c.mod_revision, text(&c.value)),
        (1, 1, "v1@1".into())
    );
    assert_eq!(s.revision(), 1, "revision() covers an acknowledged write");
    assert_eq!(s.get("/k").await.expect("get"), Some(c.clone()));

    match s.create("/k", never()).await {
        Err(Error::AlreadyExists { key }) => assert_eq!(key, "/k"),
        other => panic!("create of a present key: want AlreadyExists, got {other:?}"),
    }
    match s.update("/k", 0, never()).await {
        Err(Error::Conflict { key, current }) => {
            assert_eq!(key, "/k");
            assert_eq!(
                current,
                Some(c.clone()),
                "Conflict carries the current record"
            );
        }
        other => panic!("stale update: want Conflict, got {other:?}"),
    }
    assert_eq!(s.revision(), 1, "failed writes take no revision");

    let u = s.update("/k", 1, stamp("v2")).await.expect("update");
    assert_eq!(
        (u.create_revision, u.mod_revision, text(&u.value)),
        (1, 2, "v2@2".into())
    );
    for missing in [
        s.update("/nope", 1, never()).await,
        s.delete("/nope", 1, never()).await,
    ] {
        assert!(
            matches!(missing, Err(Error::NotFound { ref key }) if key == "/nope"),
            "{missing:?}"
        );
    }
    assert!(matches!(
        s.delete("/k", 1, never()).await,
        Err(Error::Conflict { .. })
    ));

    let t = s.delete("/k", 2, stamp("tomb")).await.expect("delete");
    assert_eq!(
        (t.create_revision, t.mod_revision, text(&t.value)),
        (1, 3, "tomb@3".into())
    );
    assert!(
        s.get("/k").await.expect("get").is_none(),
        "deleted key is gone"
    );
    assert!(matches!(
        s.update("/k", 3, never()).await,
        Err(Error::NotFound { .. })
    ));

    let again = s.create("/k", stamp("v3")).await.expect("recreate");
    assert_eq!(
        (again.create_revision, again.mod_revision),
        (4, 4),
        "a recreate starts a new life"
    );
    s.close().await;
}

pub(super) async fn values_and_keys(url: String) {
    let s = open(&url).await;
    let binary: Bytes = (0..=255u8).cycle().take(70_000).collect();
    let big: Bytes = Bytes::from(vec![b'x'; 1 << 20]);
    let cases: Vec<(&str, Bytes)> = vec![
        ("/v/binary", binary),
        ("/v/empty", Bytes::new()),
        ("/v/big", big),
        ("/v/ünïcødé/名前", Bytes::from_static(b"{}")),
        ("/v/with space/and'quote\"", Bytes::from_static(b"q")),
    ];
    for (key, value) in &cases {
        let v = value.clone();
        let r = s.create(key, Box::new(move |_| v)).await.expect("create");
        assert_eq!(&r.value, value);
        let got = s.get(key).await.expect("get").expect("present");
        assert_eq!(
            &got.value, value,
            "value of {key:?} round-trips byte for byte"
        );
        assert_eq!(got.key, *key);
    }
    s.close().await;
}

pub(super) async fn revisions_increase(url: String) {
    let s = open(&url).await;
    let tasks: Vec<_> = (0..8)
        .map(|t| {
            let s = s.clone();
            tokio::spawn(async move {
                let key = format!("/r/{t}");
                let mut revs = Vec::new();
                let mut last = s
                    .create(&key, stamp("c"))
                    .await
                    .expect("create")
                    .mod_revision;
                revs.push(last);
                for i in 0..49 {
                    let r = s
                        .update(&key, last, stamp(&format!("u{i}")))
                        .await
                        .expect("update");
                    assert!(r.mod_revision > last, "a key's revisions increase");
                    last = r.mod_revision;
                    revs.push(last);
                }
                revs
            })
        })
        .collect();
    let mut all = BTreeSet::new();
    for t in tasks {
        for r in within(60, "concurrent writers", t)
            .await
            .expect("writer task")
        {
            assert!(all.insert(r), "revision {r} was given to two writes");
        }
    }
    let want: BTreeSet<Revision> = (1..=400).collect();
    assert_eq!(
        all, want,
        "one writer per database: revisions are 1..=N without gaps"
    );
    assert_eq!(s.revision(), 400);
    s.close().await;
}

/// Writes submitted together share transactions; each must still succeed or fail alone.
pub(super) async fn group_commit(url: String) {
    let s = open(&url).await;
    for i in 0..32 {
        s.create(&format!("/g/{i:02}"), stamp("v"))
            .await
            .expect("seed");
    }
    let base = s.revision();
    // Fire everything at once: good and stale updates, duplicate creates, missing keys, and
    // sixteen racers on one key with the same expected revision.
    let mut futs = Vec::new();
    for i in 0..32i64 {
        let s = s.clone();
        let key = format!("/g/{i:02}");
        let expected = i + 1;
        futs.push(tokio::spawn(async move {
            let render: Render = if i % 2 == 0 { stamp("new") } else { never() };
            let res = if i % 2 == 0 {
                s.update(&key, expected, render).await
            } else if i % 4 == 1 {
                s.update(&key, expected + 1000, render).await
            } else {
                s.create(&key, render).await
            };
            ("slot", i, res)
        }));
    }
    for i in 0..8 {
        let s = s.clone();
        futs.push(tokio::spawn(async move {
            (
                "missing",
                i,
                s.delete(&format!("/g/missing{i}"), 1, never()).await,
            )
        }));
    }
    for i in 0..16 {
        let s = s.clone();
        futs.push(tokio::spawn(async move {
            (
                "race",
                i,
                s.update("/g/31", 32, stamp(&format!("racer{i}"))).await,
            )
        }));
    }
    let mut winners = 0;
    let mut ok = 0;
    for f in futs {
        let (kind, i, res) = within(60, "group commit", f).await.expect("task");
        match (kind, res) {
            ("slot", Ok(r)) if i % 2 == 0 => {
                assert_eq!(r.create_revision, i + 1);
                ok += 1;
            }
            (
                "slot",
                Err(Error::Conflict {
                    current: Some(c), ..
                }),
            ) if i % 4 == 1 => {
                assert_eq!(c.key, format!("/g/{i:02}"));
            }
            ("slot", Err(Error::AlreadyExists { .. })) if i % 4 == 3 => {}
            ("missing", Err(Error::NotFound { .. })) => {}
            ("race", Ok(_)) => winners += 1,
            ("race", Err(Error::Conflict { .. })) => {}
            (kind, res) => panic!("{kind} {i}: unexpected outcome {res:?}"),
        }
    }
    assert_eq!(ok, 16, "every valid update in the crowd succeeded");
    assert_eq!(winners, 1, "exactly one of the racers on one key wins");
    assert_eq!(
        s.revision(),
        base + 17,
        "only successful writes took revisions"
    );
    s.close().await;
}
