//! The conformance suite against the in-memory backend, a new named database per case (named,
//! so the reopen case finds what it wrote).

use std::sync::atomic::{AtomicUsize, Ordering};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_conformance() {
    let n = AtomicUsize::new(0);
    flotilla_store::conformance::run_all(|| {
        let k = n.fetch_add(1, Ordering::SeqCst);
        async move { format!("memory:conformance-{k}") }
    })
    .await;
}
