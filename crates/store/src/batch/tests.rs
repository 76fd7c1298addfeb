//! Table-driven tests of [`plan`]: precondition checks in queue order, revision allocation,
//! and render calls.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;

use super::*;

fn render(tag: &'static str) -> Render {
    Render::with(move |rev| Bytes::from(format!("{tag}@{rev}")))
}

fn rec(key: &str, create: Revision, modr: Revision, value: &str) -> Record {
    Record {
        key: key.into(),
        value: Bytes::from(value.to_owned()),
        create_revision: create,
        mod_revision: modr,
    }
}

fn current(recs: &[Record]) -> HashMap<String, Record> {
    recs.iter().map(|r| (r.key.clone(), r.clone())).collect()
}

#[test]
fn outcomes_in_queue_order() {
    let ops = vec![
        Op::Create {
            key: "/a".into(),
            render: render("a1"),
        },
        Op::Create {
            key: "/a".into(),
            render: render("a2"),
        },
        Op::Update {
            key: "/b".into(),
            expected: 3,
            render: render("b"),
        },
        Op::Update {
            key: "/b".into(),
            expected: 3,
            render: render("stale"),
        },
        Op::Update {
            key: "/b".into(),
            expected: 11,
            render: render("b2"),
        },
        Op::Delete {
            key: "/missing".into(),
            expected: 1,
            render: render("x"),
        },
        Op::Delete {
            key: "/a".into(),
            expected: 10,
            render: render("tomb"),
        },
        Op::Create {
            key: "/a".into(),
            render: render("a3"),
        },
    ];
    let p = plan(9, ops, current(&[rec("/b", 2, 3, "old")]));
    let outcome: Vec<String> = p
        .results
        .iter()
        .map(|r| match r {
            Ok(r) => format!(
                "ok {} {}",
                r.mod_revision,
                String::from_utf8_lossy(&r.value)
            ),
            Err(Error::AlreadyExists { .. }) => "exists".into(),
            Err(Error::NotFound { .. }) => "notfound".into(),
            Err(Error::Conflict {
                current: Some(c), ..
            }) => format!("conflict {}", c.mod_revision),
            Err(e) => format!("other {e}"),
        })
        .collect();
    assert_eq!(
        outcome,
        [
            "ok 10 a1@10",
            "exists",
            "ok 11 b@11",
            "conflict 11",
            "ok 12 b2@12",
            "notfound",
            "ok 13 tomb@13",
            "ok 14 a3@14"
        ]
    );
    assert_eq!(p.last, 14);
    let revs: Vec<Revision> = p.log.iter().map(|e| e.event.revision).collect();
    assert_eq!(revs, [10, 11, 12, 13, 14]);
    // The recreate after the delete starts a new life with no previous value.
    let last = &p.log[4];
    assert_eq!(
        (last.event.create_revision, last.event.prev_value.clone()),
        (14, None)
    );
    let tomb = &p.log[3];
    assert_eq!(tomb.event.kind, EventKind::Delete);
    assert_eq!(tomb.event.prev_value.as_deref(), Some(&b"a1@10"[..]));
    assert_eq!(tomb.prev_mod_revision, Some(10));
    assert_eq!(
        p.rows
            .get("/a")
            .and_then(|r| r.as_ref())
            .map(|r| r.mod_revision),
        Some(14)
    );
    assert_eq!(
        p.rows
            .get("/b")
            .and_then(|r| r.as_ref())
            .map(|r| r.create_revision),
        Some(2)
    );
}

#[test]
fn render_runs_only_when_preconditions_hold() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counting = |calls: &Arc<AtomicUsize>| -> Render {
        let calls = calls.clone();
        Render::with(move |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            Bytes::new()
        })
    };
    let ops = vec![
        Op::Create {
            key: "/x".into(),
            render: counting(&calls),
        },
        Op::Update {
            key: "/x".into(),
            expected: 99,
            render: counting(&calls),
        },
        Op::Delete {
            key: "/y".into(),
            expected: 1,
            render: counting(&calls),
        },
    ];
    let p = plan(0, ops, current(&[rec("/x", 1, 1, "v")]));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert!(p.log.is_empty() && p.rows.is_empty());
    assert_eq!(p.last, 0);
}

#[test]
fn a_panicking_render_fails_alone() {
    let ops = vec![
        Op::Create {
            key: "/p".into(),
            render: Render::with(|_| panic!("boom")),
        },
        Op::Create {
            key: "/q".into(),
            render: render("q"),
        },
    ];
    let p = plan(5, ops, HashMap::new());
    assert!(matches!(p.results[0], Err(Error::RenderPanicked { .. })));
    assert_eq!(p.results[1].as_ref().map(|r| r.mod_revision).ok(), Some(6));
    assert_eq!(p.last, 6);
}

#[test]
fn steps_keep_compactions_apart() {
    let (tx, _rx) = oneshot::channel();
    let (ctx, _crx) = oneshot::channel();
    let (tx2, _rx2) = oneshot::channel();
    let batch = vec![
        Request::Write {
            op: Op::Create {
                key: "/a".into(),
                render: render("a"),
            },
            reply: tx,
        },
        Request::Compact {
            revision: 1,
            reply: ctx,
        },
        Request::Write {
            op: Op::Create {
                key: "/b".into(),
                render: render("b"),
            },
            reply: tx2,
        },
    ];
    let shape: Vec<&str> = steps(batch)
        .iter()
        .map(|s| match s {
            Step::Writes(w) if w.len() == 1 => "w1",
            Step::Writes(_) => "w",
            Step::Compact(..) => "c",
        })
        .collect();
    assert_eq!(shape, ["w1", "c", "w1"]);
}
