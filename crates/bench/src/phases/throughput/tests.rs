use super::*;

#[tokio::test]
async fn drive_does_every_index_once() {
    let (tally, mut out) = drive(
        1000,
        16,
        Duration::from_secs(10),
        &ProgressBar::hidden(),
        |i| async move { Ok(i) },
    )
    .await;
    out.sort();
    assert_eq!(out, (0..1000).collect::<Vec<_>>());
    assert_eq!((tally.done, tally.errors, tally.detail()), (1000, 0, None));
}

#[tokio::test]
async fn drive_stops_after_too_many_errors() {
    let (tally, out) = drive(
        10_000,
        4,
        Duration::from_secs(10),
        &ProgressBar::hidden(),
        |i| async move {
            if i % 2 == 0 {
                anyhow::bail!("HTTP 500")
            }
            Ok(i)
        },
    )
    .await;
    assert!(tally.errors >= MAX_ERRORS && tally.errors < MAX_ERRORS + 4);
    assert!(out.len() < 10_000);
    let detail = tally.detail().unwrap();
    assert!(detail.contains("errors, first: HTTP 500"), "{detail}");
}

#[tokio::test]
async fn drive_stops_when_the_budget_is_spent() {
    let (tally, out) = drive(
        1000,
        2,
        Duration::from_millis(500),
        &ProgressBar::hidden(),
        |i| async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(i)
        },
    )
    .await;
    // Two workers, 100 ms per request, 500 ms budget: at most 10 done, the rest reported.
    assert!((2..=10).contains(&out.len()), "{}", out.len());
    assert!(
        tally.elapsed < Duration::from_secs(2),
        "{:?}",
        tally.elapsed
    );
    assert!(tally.detail().unwrap().contains("of 1000 done"));
    assert!(tally.require_some().is_ok());
}

#[test]
fn resource_versions_are_read_from_returned_objects() {
    let rv =
        resource_version(br#"{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"42"}}"#);
    assert_eq!(rv.unwrap(), "42");
    assert!(resource_version(b"{}").is_err());
}
