//! One table of (format, valid values, invalid values).

use serde_json::json;

use super::*;

#[test]
fn formats() {
    let table: &[(&str, &[&str], &[&str])] = &[
        (
            "uuid",
            &[
                "7d444840-9dc0-11d1-b245-5ffdce74fad2",
                "7D4448409DC011D1B2455FFDCE74FAD2",
            ],
            &["x", "7d444840-9dc0-11d1-b245"],
        ),
        (
            "uuid4",
            &["f47ac10b-58cc-4372-a567-0e02b2c3d479"],
            &["7d444840-9dc0-11d1-b245-5ffdce74fad2"],
        ),
        (
            "date",
            &["2024-02-29"],
            &["2023-02-29", "2024-2-1", "2024-02-29T00:00:00Z"],
        ),
        (
            "date-time",
            &[
                "2024-01-02T03:04:05Z",
                "2024-01-02T03:04:05.123+02:00",
                "2024-01-02T03:04:05",
            ],
            &["2024-01-02", "yesterday"],
        ),
        ("byte", &["aGVsbG8=", ""], &["aGVsbG8", "not base64!"]),
        ("ipv4", &["10.0.0.1"], &["10.0.0.256", "::1"]),
        ("ipv6", &["::1", "fe80::1"], &["10.0.0.1"]),
        (
            "cidr",
            &["10.0.0.0/8", "fd00::/64"],
            &["10.0.0.0", "10.0.0.0/33"],
        ),
        (
            "mac",
            &["01:23:45:67:89:ab", "0123.4567.89ab"],
            &["01:23:45"],
        ),
        ("hostname", &["example.com", "a"], &["-bad-", "a..b"]),
        ("hexcolor", &["#fff", "a0b1c2"], &["#ffff"]),
        ("duration", &["1h30m", "5s"], &["five seconds"]),
        ("int32", &["anything"], &[]),
        ("password", &["anything"], &[]),
        ("unknown-format", &["anything"], &[]),
    ];
    for (format, good, bad) in table {
        for s in *good {
            assert!(valid(format, s), "{format}: {s:?} should be valid");
        }
        for s in *bad {
            assert!(!valid(format, s), "{format}: {s:?} should be invalid");
        }
    }
}

#[test]
fn message_is_kubes_type_error() {
    assert_eq!(
        check("uuid", &json!("x"), "spec.id"),
        Some((
            "spec.id".into(),
            r#"Invalid value: "x": spec.id in body must be of type uuid: "x""#.into()
        ))
    );
    assert_eq!(check("uuid", &json!(3), "spec.id"), None);
}
