use super::*;

#[tokio::test]
async fn dropping_every_handle_ends_the_writer_queue() {
    let (shared, mut end) = Shared::new(0, 0, false);
    drop(shared);
    assert!(
        end.requests.recv().await.is_none(),
        "the writer would wait forever"
    );
}
