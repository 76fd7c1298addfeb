use super::*;
use serde_json::json;

/// `[[…[1]…]]`, `n` arrays deep.
fn nested(n: usize) -> String {
    "[".repeat(n) + "1" + &"]".repeat(n)
}

#[test]
fn max_depth_is_what_serde_json_reads_back() {
    let deepest: Value = serde_json::from_str(&nested(MAX_DEPTH)).unwrap();
    assert_eq!(depth_within(&deepest, MAX_DEPTH), Some(MAX_DEPTH));
    assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH + 1)).is_err());
}

#[test]
fn depth_counts_containers() {
    for (value, depth) in [
        (json!(1), 0),
        (json!({}), 1),
        (json!({"a": []}), 2),
        (json!({"a": [1, {"b": {}}], "c": 2}), 4),
    ] {
        assert_eq!(depth_within(&value, 10), Some(depth), "{value}");
    }
    assert_eq!(depth_within(&json!({"a": {"b": {}}}), 2), None);
}

#[test]
fn depth_of_a_value_too_deep_to_drop_recursively_is_measured() {
    let mut v = json!(1);
    for _ in 0..100_000 {
        v = Value::Array(vec![v]);
    }
    assert_eq!(depth_within(&v, MAX_DEPTH), None);
    // Take it apart iteratively: dropping it whole would recurse 100,000 times.
    while let Value::Array(mut items) = v {
        v = items.pop().unwrap_or(Value::Null);
    }
}

#[test]
fn length_stops_at_the_limit() {
    let v = json!({"a": "xyz"});
    assert_eq!(json_len_within(&v, 100), Some(v.to_string().len()));
    assert_eq!(json_len_within(&v, 5), None);
}

#[test]
fn storable_objects_are_bounded_in_size_and_depth() {
    assert!(check_storable(&json!({"a": "b"})).is_ok());
    let big = json!({"a": "x".repeat(MAX_OBJECT)});
    assert_eq!(check_storable(&big).unwrap_err().code, 413);
    let deep: Value = serde_json::from_str(&nested(MAX_DEPTH)).unwrap();
    assert!(check_storable(&deep).is_ok());
    let deeper = json!({ "a": deep });
    let e = check_storable(&deeper).unwrap_err();
    assert_eq!((e.code, e.reason), (422, "Invalid"));
}

#[test]
fn watches_are_counted_per_user_until_dropped() {
    use crate::auth::UserInfo;
    use crate::limits::watches::Watches;
    let user = |name: &str, groups: &[&str]| UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    };
    let watches = Watches::new(2);
    let (a, b) = (user("a", &[]), user("b", &[]));
    let one = watches.open(&a).unwrap();
    let two = watches.open(&a).unwrap();
    let err = watches.open(&a).unwrap_err();
    assert_eq!((err.code, err.reason), (429, "TooManyRequests"));
    assert!(
        err.message.contains("\"a\" has 2 watches open"),
        "{}",
        err.message
    );
    // Another user has a bound of their own; system:masters none.
    assert!(watches.open(&b).unwrap().is_some());
    let admin = user("admin", &["system:masters"]);
    let held: Vec<_> = (0..5).map(|_| watches.open(&admin).unwrap()).collect();
    assert!(held.iter().all(Option::is_none));
    drop(one);
    assert_eq!(watches.open_by("a"), 1);
    let three = watches.open(&a).unwrap();
    drop((two, three));
    assert_eq!(watches.open_by("a"), 0);
    // 0: no bound.
    let unbounded = Watches::new(0);
    assert!(unbounded.open(&a).unwrap().is_none());
}

#[test]
fn unpaged_lists_past_the_bound_are_413() {
    assert!(unpaged_list("configmaps", 5, 5).is_ok());
    assert!(unpaged_list("configmaps", 1_000_000, 0).is_ok());
    let err = unpaged_list("configmaps", 6, 5).unwrap_err();
    assert_eq!((err.code, err.reason), (413, "RequestEntityTooLarge"));
    assert!(err.message.contains("6 items"), "{}", err.message);
}
