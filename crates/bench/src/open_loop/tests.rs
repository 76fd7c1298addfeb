use super::*;

#[tokio::test]
async fn sends_on_schedule_and_keeps_results_and_errors() {
    let load = OpenLoop::new();
    let started = Instant::now();
    let took = load
        .send(5, 100, started, |i| async move {
            if i == 3 {
                Err(format!("request {i} failed"))
            } else {
                Ok((i, Instant::now()))
            }
        })
        .await;
    assert!(took >= Duration::from_millis(40), "{took:?}");
    assert!(!load.sending());
    let mut sent = load.map(|(i, _)| *i);
    sent.sort();
    assert_eq!(sent, [0, 1, 2, 4]);
    let (done, errors) = load.take();
    assert_eq!(done.len(), 4);
    assert_eq!(errors, (1, Some("request 3 failed".into())));
    for (i, at) in done {
        assert!(
            at - started >= stats::due(i as u64, 100),
            "request {i} sent early"
        );
    }
}
