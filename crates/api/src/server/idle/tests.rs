use super::*;

const FIRST: Duration = Duration::from_secs(2);
const IDLE: Duration = Duration::from_secs(90);

/// Whether `expired` completes within `after` of (paused) time.
async fn expires_within(activity: &Activity, after: Duration) -> bool {
    tokio::time::timeout(after, activity.expired(FIRST, IDLE))
        .await
        .is_ok()
}

#[tokio::test(start_paused = true)]
async fn a_connection_without_requests_expires_after_the_first_limit() {
    let activity = Activity::default();
    assert!(!expires_within(&activity, FIRST - Duration::from_millis(10)).await);
    assert!(expires_within(&activity, Duration::from_millis(20)).await);
}

#[tokio::test(start_paused = true)]
async fn requests_in_flight_keep_it_then_idleness_counts_from_the_last() {
    let activity = Arc::new(Activity::default());
    let busy = activity.begin();
    assert!(!expires_within(&activity, IDLE * 3).await, "a long request");
    drop(busy);
    assert!(!expires_within(&activity, IDLE - Duration::from_secs(1)).await);
    assert!(expires_within(&activity, Duration::from_secs(2)).await);
}
