use bytes::Bytes;

use super::*;

fn ops() -> Vec<Op> {
    vec![
        Op::Create {
            key: "/a".into(),
            render: Render::splice(&b"{\"rv\":\""[..], &b"\"}"[..]),
        },
        Op::Update {
            key: "/b".into(),
            expected: 41,
            render: Render::fixed(&b"fixed"[..]),
        },
        Op::Delete {
            key: "/c".into(),
            expected: 7,
            render: Render::splice(Bytes::new(), Bytes::new()),
        },
    ]
}

#[test]
fn writes_travel_whole() {
    for op in ops() {
        let bytes = encode_op(&op).expect("a splice travels");
        let back = decode_op(bytes.clone()).expect("decodes");
        assert_eq!(encode_op(&back), Some(bytes));
    }
    let function = Op::Create {
        key: "/f".into(),
        render: Render::with(|_| Bytes::new()),
    };
    assert!(encode_op(&function).is_none(), "a function stays home");
    assert!(decode_op(Bytes::from_static(b"\x09garbage")).is_none());
    let whole = encode_op(&ops().remove(0)).unwrap();
    assert!(
        decode_op(whole.slice(..whole.len() - 1)).is_none(),
        "truncated"
    );
}

#[test]
fn answers_travel_whole() {
    let rec = Record {
        key: "/k".into(),
        create_revision: 3,
        mod_revision: 9,
        value: Bytes::from_static(b"v"),
    };
    let done = decode_answer(encode_answer(Some(&Ok(rec.clone()))), "/k");
    match done {
        Some(Answer::Taken(Ok(r))) => {
            assert_eq!((r.create_revision, r.mod_revision), (3, 9));
            assert!(r.value.is_empty(), "the value is rendered by the sender");
        }
        _ => panic!("a done write"),
    }
    let conflict = Err(Error::Conflict {
        key: "/k".into(),
        current: Some(rec.clone()),
    });
    match decode_answer(encode_answer(Some(&conflict)), "/k") {
        Some(Answer::Taken(Err(Error::Conflict {
            current: Some(r), ..
        }))) => assert_eq!(r, rec),
        _ => panic!("a conflict with the current record"),
    }
    assert!(matches!(
        decode_answer(encode_answer(None), "/k"),
        Some(Answer::NotTaken)
    ));
    let exists = Err(Error::AlreadyExists { key: "/k".into() });
    assert!(matches!(
        decode_answer(encode_answer(Some(&exists)), "/k"),
        Some(Answer::Taken(Err(Error::AlreadyExists { .. })))
    ));
    let unknown = Err(Error::CommitUnknown {
        source: Error::source_of(Remote("lost".into())),
    });
    match decode_answer(encode_answer(Some(&unknown)), "/k") {
        Some(Answer::Taken(Err(e @ Error::CommitUnknown { .. }))) => {
            assert!(format!("{:?}", e).contains("lost"))
        }
        _ => panic!("an unknown outcome stays unknown"),
    }
    assert!(decode_answer(Bytes::from_static(b"\x00short"), "/k").is_none());
}

#[test]
fn frames_keep_their_parts_in_order() {
    let parts = vec![
        Bytes::from_static(b"one"),
        Bytes::new(),
        Bytes::from_static(b"three"),
    ];
    assert_eq!(unframe(frame(&parts)), Some(parts.clone()));
    assert_eq!(unframe(frame(&[])), Some(vec![]));
    let whole = frame(&parts);
    assert!(
        unframe(whole.slice(..whole.len() - 1)).is_none(),
        "truncated"
    );
    let mut longer = whole.to_vec();
    longer.push(0);
    assert!(unframe(Bytes::from(longer)).is_none(), "trailing bytes");
}
