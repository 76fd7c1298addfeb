use super::*;

fn latency(p99_ms: u64) -> Measured {
    Measured::Latency(Summary {
        count: 1,
        p50: Duration::from_millis(1),
        p95: Duration::from_millis(p99_ms),
        p99: Duration::from_millis(p99_ms),
        max: Duration::from_millis(p99_ms),
    })
}

#[test]
fn goals_are_met_or_not() {
    let cases = [
        (
            Goal::AtLeastPerSecond(8000.0),
            Measured::PerSecond(8000.0),
            true,
        ),
        (
            Goal::AtLeastPerSecond(8000.0),
            Measured::PerSecond(7999.0),
            false,
        ),
        (Goal::P99AtMost(Duration::from_millis(5)), latency(5), true),
        (Goal::P99AtMost(Duration::from_millis(5)), latency(6), false),
        (
            Goal::AtMostBytes(400_000_000),
            Measured::Bytes(400_000_000),
            true,
        ),
        (
            Goal::AtMostBytes(400_000_000),
            Measured::Bytes(400_000_001),
            false,
        ),
    ];
    for (goal, value, want) in cases {
        let f = Figure::new("k", "l".into(), Some(goal), Ok((value, None)));
        assert_eq!(f.met(), Some(want), "{goal:?} {value:?}");
    }
    let failed = Figure::new("k", "l".into(), None, Err(anyhow::anyhow!("boom")));
    assert_eq!(failed.met(), None);
    assert_eq!(failed.value_text(), "failed: boom");
}

#[test]
fn cells() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(8017), "8,017");
    assert_eq!(thousands(1_234_567), "1,234,567");
    assert_eq!(Measured::PerSecond(8016.6).text(), "8,017/s");
    assert_eq!(Measured::Bytes(423_624_704).text(), "424 MB (404 MiB)");
    assert_eq!(Goal::AtMostBytes(400_000_000).text(), "≤ 400 MB");
    assert_eq!(
        Goal::P99AtMost(Duration::from_millis(50)).text(),
        "p99 ≤ 50 ms"
    );
    let f = Figure::new(
        "k",
        "l".into(),
        None,
        Ok((latency(13), Some("2 errors".into()))),
    );
    assert_eq!(f.value_text(), "1.00 ms / 13.00 ms (2 errors)");
}
