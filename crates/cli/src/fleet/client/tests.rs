use super::*;

#[test]
fn durations_and_labels() {
    assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
    assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
    assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
    assert!(parse_duration("1y").is_err());
    let l = parse_labels("env=prod, tier=web").unwrap();
    assert_eq!(l.get("tier").map(String::as_str), Some("web"));
    assert!(parse_labels("oops").is_err());
}
