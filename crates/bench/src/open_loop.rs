//! Open-loop load for the member-cluster benchmarks: request `i` is sent when it is due on a
//! fixed schedule ([`super::stats::due`]), whether or not earlier ones have returned, so a slow
//! server meets the offered rate and its slowness shows in the latencies instead of lowering
//! the load. What the requests return is kept for the benchmark to read while they are still
//! being sent (to wait for them as they come).

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::stats;

/// Requests sent on a schedule and what they returned; cloning shares them.
pub struct OpenLoop<T> {
    inner: Arc<Inner<T>>,
}

struct Inner<T> {
    /// What each successful request returned, in the order they returned.
    done: Mutex<Vec<T>>,
    /// Failed requests and the first error.
    errors: Mutex<(usize, Option<String>)>,
    /// Until every request has returned.
    sending: AtomicBool,
}

impl<T> Clone for OpenLoop<T> {
    fn clone(&self) -> Self {
        OpenLoop {
            inner: self.inner.clone(),
        }
    }
}

impl<T: Send + 'static> OpenLoop<T> {
    /// Nothing sent yet.
    pub fn new() -> OpenLoop<T> {
        OpenLoop {
            inner: Arc::new(Inner {
                done: Mutex::new(Vec::new()),
                errors: Mutex::new((0, None)),
                sending: AtomicBool::new(true),
            }),
        }
    }

    /// Send `n` requests at `rate` per second from `started`: request `i` is `request(i)`,
    /// spawned when due. Returns how long sending took (the last request sent, not returned);
    /// waits for every request to return before it does.
    pub async fn send<F, Fut>(&self, n: usize, rate: u64, started: Instant, request: F) -> Duration
    where
        F: Fn(usize) -> Fut,
        Fut: Future<Output = Result<T, String>> + Send + 'static,
    {
        let mut tasks = tokio::task::JoinSet::new();
        for i in 0..n {
            tokio::time::sleep_until((started + stats::due(i as u64, rate)).into()).await;
            let sent = request(i);
            let inner = self.inner.clone();
            tasks.spawn(async move {
                match sent.await {
                    Ok(v) => lock(&inner.done).push(v),
                    Err(e) => {
                        let mut errors = lock(&inner.errors);
                        errors.0 += 1;
                        errors.1.get_or_insert(e);
                    }
                }
            });
        }
        let took = started.elapsed();
        while tasks.join_next().await.is_some() {}
        self.inner.sending.store(false, Ordering::SeqCst);
        took
    }

    /// Whether requests are still being sent or awaited.
    pub fn sending(&self) -> bool {
        self.inner.sending.load(Ordering::SeqCst)
    }

    /// `f` of every request that has returned so far.
    pub fn map<R>(&self, f: impl Fn(&T) -> R) -> Vec<R> {
        lock(&self.inner.done).iter().map(f).collect()
    }

    /// What the requests returned, and the failures with the first error; leaves none behind.
    pub fn take(&self) -> (Vec<T>, (usize, Option<String>)) {
        (
            std::mem::take(&mut *lock(&self.inner.done)),
            std::mem::take(&mut *lock(&self.inner.errors)),
        )
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Only lists and counters are behind these locks; a panicked holder leaves them usable.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
