use super::*;

#[test]
fn renewal_comes_at_half_the_time_left() {
    let h = |n: u64| Duration::from_secs(n * 3600);
    for (left, want) in [
        (h(24), h(12)),
        // A hub capping tokens at an hour: renewed every half hour, not every minute.
        (h(1), Duration::from_secs(1800)),
        (Duration::from_secs(4), RENEW_AT_LEAST_AFTER),
        (Duration::ZERO, RENEW_AT_LEAST_AFTER),
    ] {
        assert_eq!(renew_after(left), want, "{left:?}");
    }
}
