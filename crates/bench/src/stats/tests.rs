use super::*;

#[test]
fn nearest_rank_percentiles() {
    let v: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
    let s = summarize(v).unwrap();
    assert_eq!(s.count, 100);
    assert_eq!(s.p50, Duration::from_millis(50));
    assert_eq!(s.p95, Duration::from_millis(95));
    assert_eq!(s.p99, Duration::from_millis(99));
    assert_eq!(s.max, Duration::from_millis(100));
}

#[test]
fn percentiles_of_few_values() {
    let table: &[(&[u64], f64, u64)] = &[
        (&[7], 0.5, 7),
        (&[7], 0.99, 7),
        (&[1, 2], 0.5, 1),
        (&[1, 2], 0.99, 2),
        (&[1, 2, 3], 0.5, 2),
        // One stall in 50 requests is above the 98th percentile, so p99 shows it.
        (&[[1; 49].as_slice(), &[900]].concat(), 0.99, 900),
    ];
    for (values, p, want) in table {
        let sorted: Vec<Duration> = values.iter().map(|v| Duration::from_millis(*v)).collect();
        let mut sorted = sorted;
        sorted.sort();
        assert_eq!(
            percentile(&sorted, *p),
            Some(Duration::from_millis(*want)),
            "{values:?} p{p}"
        );
    }
    assert_eq!(percentile(&[], 0.5), None);
    assert_eq!(summarize(Vec::new()), None);
}

#[test]
fn schedule_is_even_and_does_not_drift() {
    assert_eq!(due(0, 2000), Duration::ZERO);
    assert_eq!(due(1, 2000), Duration::from_micros(500));
    assert_eq!(due(3, 3), Duration::from_secs(1));
    // 1/3 s does not add up exactly; computing from i keeps request 3,000,000 on time.
    assert_eq!(due(3_000_000, 3), Duration::from_secs(1_000_000));
    assert_eq!(
        due(5, 0),
        Duration::from_secs(5),
        "a zero rate counts as 1/s"
    );
}

#[test]
fn milliseconds() {
    assert_eq!(ms(Duration::from_micros(1450)), "1.45 ms");
}
