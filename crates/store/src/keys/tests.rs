use super::*;

#[test]
fn successors() {
    let cases: &[(&str, Option<&str>)] = &[
        ("", None),
        ("/a/", Some("/a0")),
        ("/registry/pods/", Some("/registry/pods0")),
        ("a\u{7f}", Some("a\u{80}")),
        ("x\u{D7FF}", Some("x\u{E000}")),
        ("b\u{10FFFF}", Some("c")),
        ("\u{10FFFF}", None),
    ];
    for (prefix, want) in cases {
        assert_eq!(
            prefix_successor(prefix).as_deref(),
            *want,
            "prefix {prefix:?}"
        );
    }
}

#[test]
fn successor_bounds_every_extension_bytewise() {
    for prefix in ["/a/", "é", "a\u{7f}", "x\u{FFFF}"] {
        let succ = prefix_successor(prefix).unwrap_or_default();
        for tail in ["", "\0", "zzz", "\u{10FFFF}\u{10FFFF}", "é"] {
            let k = format!("{prefix}{tail}");
            assert!(k.as_bytes() >= prefix.as_bytes());
            assert!(k.as_bytes() < succ.as_bytes(), "{k:?} vs {succ:?}");
        }
    }
}

#[test]
fn range_sql() {
    let r = Range::new("/a/", Some("/a/b"));
    assert_eq!(r.sql("key", '?', 1), "key >= ?1 AND key < ?2 AND key > ?3");
    assert_eq!(r.params(), vec!["/a/", "/a0", "/a/b"]);
    let r = Range::new("", None);
    assert_eq!(r.sql("key", '$', 2), "key >= $2");
    let r = Range::new("/b/", Some("/a/z"));
    assert!(r.after.is_none());
}
