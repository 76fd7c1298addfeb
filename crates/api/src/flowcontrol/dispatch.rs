//! The part of priority and fairness that queues: seats for requests being served, and fair
//! queuing for the requests waiting for one.
//!
//! Two pools, as kube-apiserver's `--max-requests-inflight` (reads) and
//! `--max-mutating-requests-inflight` (writes). A request takes a seat while it is handled (a
//! watch is long-running and takes none; the `exempt` priority level, `system:masters` and the
//! health checks, takes none). When the pool is full it waits in the queue of its flow (its
//! priority level and user), and each seat given back goes to the next flow in turn, not to the
//! next request: a user sending thousands of requests waits behind its own, while another
//! user's request is served within one turn. A flow's queue holds at most [`QUEUE_LENGTH`]
//! requests and a request waits at most [`MAX_WAIT`]; beyond either it is refused with 429
//! `TooManyRequests` and `Retry-After: 1`, as kube-apiserver refuses.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::error::ApiError;

/// Requests one flow may have waiting.
pub const QUEUE_LENGTH: usize = 128;

/// The longest a request waits for a seat.
pub const MAX_WAIT: Duration = Duration::from_secs(15);

/// Who is queued together: a priority level and a user.
pub type FlowKey = (Arc<str>, String);

/// One pool of seats and its queues.
pub struct Pool {
    limit: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    in_use: usize,
    /// Waiters of each flow that has some, oldest first.
    queues: HashMap<FlowKey, VecDeque<oneshot::Sender<Seat>>>,
    /// The flows with waiters, in the order they are served.
    turn: VecDeque<FlowKey>,
    queued: usize,
}

/// A seat, given back when dropped (to the next flow's waiter, or the pool).
pub struct Seat {
    pool: Option<Arc<Pool>>,
}

impl Drop for Seat {
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            Pool::release(&pool);
        }
    }
}

impl Pool {
    /// A pool of `limit` seats (0: unlimited).
    pub fn new(limit: usize) -> Arc<Pool> {
        Arc::new(Pool {
            limit,
            state: Mutex::new(State::default()),
        })
    }

    /// Requests being served and waiting.
    pub fn load(&self) -> (usize, usize) {
        let st = self.state.lock();
        (st.in_use, st.queued)
    }

    /// A seat for a request of `flow`: at once when one is free and nobody waits, else after
    /// the flows queued before it had their turn. 429 when its queue is full or it waited
    /// [`MAX_WAIT`].
    pub async fn acquire(self: &Arc<Self>, flow: FlowKey) -> Result<Seat, ApiError> {
        if self.limit == 0 {
            return Ok(Seat { pool: None });
        }
        let rx = {
            let mut st = self.state.lock();
            if st.in_use < self.limit && st.queued == 0 {
                st.in_use += 1;
                return Ok(self.seat());
            }
            let queue = st.queues.entry(flow.clone()).or_default();
            if queue.len() >= QUEUE_LENGTH {
                return Err(too_many());
            }
            let (tx, rx) = oneshot::channel();
            queue.push_back(tx);
            if queue.len() == 1 {
                st.turn.push_back(flow);
            }
            st.queued += 1;
            rx
        };
        match tokio::time::timeout(MAX_WAIT, rx).await {
            Ok(Ok(seat)) => Ok(seat),
            // Given up: a seat sent meanwhile is dropped with the receiver and goes on to the
            // next waiter; the dead sender is skipped when its turn comes.
            _ => Err(too_many()),
        }
    }

    fn seat(self: &Arc<Self>) -> Seat {
        Seat {
            pool: Some(self.clone()),
        }
    }

    /// A seat given back: to the waiter whose flow's turn it is, else to the pool.
    fn release(self: &Arc<Self>) {
        let mut st = self.state.lock();
        while let Some(flow) = st.turn.pop_front() {
            let Some(queue) = st.queues.get_mut(&flow) else {
                continue;
            };
            let waiter = queue.pop_front();
            let more = !queue.is_empty();
            if more {
                st.turn.push_back(flow);
            } else {
                st.queues.remove(&flow);
            }
            let Some(waiter) = waiter else { continue };
            st.queued -= 1;
            if waiter.is_closed() {
                continue;
            }
            // The seat moves on; if the waiter gave up just now, dropping it releases again.
            let seat = self.seat();
            drop(st);
            if let Err(seat) = waiter.send(seat) {
                drop(seat);
            }
            return;
        }
        st.in_use -= 1;
    }
}

/// kube-apiserver's refusal of a request it cannot take now.
pub fn too_many() -> ApiError {
    ApiError {
        details: Some(serde_json::json!({"retryAfterSeconds": 1})),
        ..ApiError::new(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(user: &str) -> FlowKey {
        ("workload-low".into(), user.into())
    }

    #[tokio::test]
    async fn a_flooding_user_waits_behind_its_own_requests() {
        let pool = Pool::new(1);
        let held = pool.acquire(flow("flood")).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = Vec::new();
        // Ten requests of the flood queue first, then one of another user.
        for i in 0..10 {
            let (pool, order) = (pool.clone(), order.clone());
            tasks.push(tokio::spawn(async move {
                let _seat = pool.acquire(flow("flood")).await.unwrap();
                order.lock().push(format!("flood-{i}"));
            }));
            tokio::task::yield_now().await;
        }
        let (p, o) = (pool.clone(), order.clone());
        tasks.push(tokio::spawn(async move {
            let _seat = p.acquire(flow("alice")).await.unwrap();
            o.lock().push("alice".to_string());
        }));
        tokio::task::yield_now().await;
        assert_eq!(pool.load(), (1, 11));
        drop(held);
        for t in tasks {
            t.await.unwrap();
        }
        let order = order.lock().clone();
        let alice = order.iter().position(|o| o == "alice").unwrap();
        assert!(alice <= 1, "alice served within one turn: {order:?}");
        assert_eq!(order.len(), 11);
        assert_eq!(pool.load(), (0, 0), "every seat given back");
    }

    #[tokio::test(start_paused = true)]
    async fn a_full_queue_or_a_long_wait_is_429() {
        let pool = Pool::new(1);
        let _held = pool.acquire(flow("a")).await.unwrap();
        let mut waiting = Vec::new();
        for _ in 0..QUEUE_LENGTH {
            let p = pool.clone();
            waiting.push(tokio::spawn(async move {
                p.acquire(flow("a")).await.map(|_| ())
            }));
        }
        tokio::task::yield_now().await;
        let full = pool.acquire(flow("a")).await.map(|_| ()).unwrap_err();
        assert_eq!((full.code, full.reason), (429, "TooManyRequests"));
        // Another flow still queues; everyone waiting gives up after MAX_WAIT.
        let other = pool.clone();
        let b = tokio::spawn(async move { other.acquire(flow("b")).await.map(|_| ()) });
        tokio::time::sleep(MAX_WAIT + Duration::from_secs(1)).await;
        assert_eq!(b.await.unwrap().unwrap_err().code, 429);
        for w in waiting {
            assert_eq!(w.await.unwrap().unwrap_err().code, 429);
        }
        // The given-up waiters are skipped: the next release frees the seat.
        drop(_held);
        assert_eq!(pool.load().0, 0);
        let _again = pool.acquire(flow("c")).await.unwrap();
    }

    #[tokio::test]
    async fn unlimited_takes_no_seat() {
        let pool = Pool::new(0);
        let seats: Vec<_> =
            futures::future::join_all((0..1000).map(|_| pool.acquire(flow("x")))).await;
        assert!(seats.iter().all(|s| s.is_ok()));
        assert_eq!(pool.load(), (0, 0));
    }
}
