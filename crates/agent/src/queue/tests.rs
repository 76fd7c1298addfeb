use super::*;

#[tokio::test]
async fn names_are_queued_once_and_never_handed_out_twice_at_once() {
    let q = Queue::default();
    q.add("a");
    q.add("b");
    q.add("a");
    assert_eq!(q.len(), 2);
    let first = q.next().await;
    assert_eq!(first, "a");
    // Added while active: not handed to a second worker now...
    q.add("a");
    assert_eq!(q.next().await, "b");
    assert!(q.is_empty());
    // ...but again once the first worker is done.
    q.done("a");
    assert_eq!(q.next().await, "a");
    q.done("a");
    q.done("b");
    assert!(q.is_empty());
}

#[tokio::test(start_paused = true)]
async fn delayed_names_arrive_after_the_delay() {
    let q = Queue::default();
    q.add_after("later", Duration::from_secs(5));
    tokio::task::yield_now().await;
    assert!(q.is_empty());
    tokio::time::sleep(Duration::from_secs(6)).await;
    assert_eq!(q.next().await, "later");
}
