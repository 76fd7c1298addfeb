use super::*;

#[test]
fn go_durations_parse_as_go_parses_them() {
    let ok = [
        ("0", 0.0),
        ("0s", 0.0),
        ("3m", 180.0),
        ("1h30m", 5400.0),
        ("1.5s", 1.5),
        ("300ms", 0.3),
        ("+2s", 2.0),
        ("-1s", 0.0),
    ];
    for (s, secs) in ok {
        let d = parse_go_duration(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        assert!((d.as_secs_f64() - secs).abs() < 1e-9, "{s}: {d:?}");
    }
    let bad = [
        ("invalid", "time: invalid duration \"invalid\""),
        ("3", "time: missing unit in duration \"3\""),
        ("3x", "time: unknown unit \"x\" in duration \"3x\""),
        ("", "time: invalid duration \"\""),
        ("1..2s", "time: invalid duration \"1..2s\""),
    ];
    for (s, message) in bad {
        assert_eq!(parse_go_duration(s).unwrap_err(), message, "{s}");
    }
}

#[test]
fn a_bad_timeout_is_400_except_on_a_watch() {
    let e = check("/version", Some("timeout=invalid")).unwrap_err();
    assert_eq!((e.code, e.reason), (400, "BadRequest"));
    assert_eq!(
        e.message,
        "invalid timeout specified in the request URL - time: invalid duration \"invalid\""
    );
    for (path, query) in [
        ("/version", Some("timeout=3m")),
        ("/version", Some("timeout=0s")),
        ("/version", Some("timeout=")),
        ("/version", None),
        ("/api/v1/pods", Some("watch=true&timeout=invalid")),
        ("/api/v1/watch/pods", Some("timeout=invalid")),
    ] {
        assert!(check(path, query).is_ok(), "{path}?{query:?}");
    }
}
