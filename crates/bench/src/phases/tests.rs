use super::*;

#[test]
fn configmaps_carry_a_kibibyte() {
    let body = configmap("ns", "a", Some("7"), Some(("k", "v")), b'x').unwrap();
    let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(v["data"]["payload"].as_str().unwrap().len(), 1024);
    assert_eq!(v["metadata"]["resourceVersion"], "7");
    assert_eq!(v["metadata"]["annotations"]["k"], "v");
    assert_eq!(v["metadata"]["namespace"], "ns");
}

#[test]
fn the_full_run_fits_its_time() {
    let s = Scale::full();
    // Open-loop phases and the watch phase have fixed lengths (plus a 10 s grace each);
    // the throughput phases are bounded by their budgets, the fill by three. Even a server
    // slow enough to use every budget must be done within ~5 minutes.
    let worst = 2 * (s.latency_duration.as_secs() + 10)
        + s.watch_events as u64 / s.watch_rate
        + 10
        + (4 + 1 + 3) * s.budget.as_secs();
    assert!(worst <= 330, "{worst} s");
    assert_eq!(s.get_rate * s.latency_duration.as_secs(), 40_000);
}
