//! The worker of the loops that bring one whole state into place in a pass (the APIServices,
//! the Service `default/kubernetes`): the kicks sent while a pass runs make one more pass, a
//! pass is made every `resync` even without a kick, and a failed pass is tried again after
//! `retry`.

use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use crate::error::{ApiError, Result};

/// Starts the ticker and the worker calling `pass()` on each kick sent to the returned sender;
/// `failed` logs a pass's error before the retry.
pub(crate) fn start<F, Fut, L>(
    resync: Duration,
    retry: Duration,
    mut pass: F,
    failed: L,
) -> UnboundedSender<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = Result<()>> + Send,
    L: Fn(&ApiError) + Send + 'static,
{
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let ticker = tx.clone();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(resync);
        loop {
            tick.tick().await;
            if ticker.send(()).is_err() {
                return;
            }
        }
    });
    let again = tx.clone();
    tokio::spawn(async move {
        while rx.recv().await.is_some() {
            // One pass covers every kick queued meanwhile.
            while rx.try_recv().is_ok() {}
            if let Err(e) = pass().await {
                failed(&e);
                tokio::time::sleep(retry).await;
                let _ = again.send(());
            }
        }
    });
    tx
}
