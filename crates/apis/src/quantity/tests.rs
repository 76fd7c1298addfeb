use super::*;

#[test]
fn quantities_parse_to_millis() {
    let table: &[(&str, Option<i64>)] = &[
        ("500m", Some(500)),
        ("2", Some(2000)),
        ("1.5", Some(1500)),
        ("1Ki", Some(1024 * 1000)),
        ("1Gi", Some((1 << 30) * 1000)),
        ("1.5Gi", Some((3 << 29) * 1000)),
        ("2k", Some(2_000_000)),
        ("1e3", Some(1_000_000)),
        ("-1", Some(-1000)),
        ("", None),
        ("abc", None),
        ("1Zi", None),
        ("0.0001", Some(1)),
        ("1.5m", Some(2)),
    ];
    for (s, want) in table {
        assert_eq!(millis(&Quantity((*s).to_owned())), *want, "{s}");
    }
    assert_eq!(format_millis(2000), "2");
    assert_eq!(format_millis(1500), "1500m");
}
