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

#[test]
fn networks_are_checked_as_cidrs() {
    for ok in ["10.1.0.0/16", "192.168.1.7/32", "fd00::/8", "0.0.0.0/0"] {
        assert_eq!(super::parse_cidr(ok).as_deref(), Ok(ok), "{ok}");
    }
    for bad in [
        "10.1.0.0",
        "10.1.0.0/33",
        "fd00::/129",
        "eu-west/8",
        "10.1.0.0/x",
    ] {
        assert!(super::parse_cidr(bad).is_err(), "{bad}");
    }
}
