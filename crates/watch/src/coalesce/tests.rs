use std::time::Duration;

use futures::StreamExt;
use tokio::sync::mpsc::unbounded_channel;

use super::coalesce;

const WINDOW: Duration = Duration::from_millis(100);

#[tokio::test(start_paused = true)]
async fn a_burst_comes_out_once_each_in_first_seen_order() {
    let (tx, rx) = unbounded_channel();
    let out = coalesce(rx, WINDOW);
    futures::pin_mut!(out);
    for item in ["b", "a", "b", "c", "a"] {
        tx.send(item).unwrap();
    }
    let started = tokio::time::Instant::now();
    let burst: Vec<&str> = vec![
        out.next().await.unwrap(),
        out.next().await.unwrap(),
        out.next().await.unwrap(),
    ];
    assert_eq!(burst, ["b", "a", "c"]);
    assert!(
        started.elapsed() >= WINDOW,
        "the burst was held for its window"
    );
}

#[tokio::test(start_paused = true)]
async fn what_comes_after_the_window_is_the_next_burst() {
    let (tx, rx) = unbounded_channel();
    let out = coalesce(rx, WINDOW);
    futures::pin_mut!(out);
    tx.send(1).unwrap();
    assert_eq!(out.next().await, Some(1));
    // The same item again, after its burst was handed on: it comes out again.
    tx.send(1).unwrap();
    tx.send(2).unwrap();
    assert_eq!(out.next().await, Some(1));
    assert_eq!(out.next().await, Some(2));
}

#[tokio::test(start_paused = true)]
async fn ends_after_the_last_burst_when_the_sender_is_gone() {
    let (tx, rx) = unbounded_channel();
    let out = coalesce(rx, WINDOW);
    futures::pin_mut!(out);
    tx.send(7).unwrap();
    tx.send(7).unwrap();
    drop(tx);
    assert_eq!(out.next().await, Some(7));
    assert_eq!(out.next().await, None);
}
